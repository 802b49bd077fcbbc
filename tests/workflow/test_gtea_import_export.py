"""Importing the published GTEA labels and exporting gives the published files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotator.base.gtea import LabelFormatError, parse_gtea_labels
from annotator.models import GroundTruthVersion
from scoring import score_submission

TASK = Path("data/agentic-vbench/egocentric-activity-understanding")
LABELS = TASK / "steps/solve/tests/Ahmad_American.txt"


@pytest.mark.django_db
def test_import_then_export_reproduces_the_published_gt_json(packet, maintainer, tmp_path, capsys):
    call_command("import_gtea_labels", str(LABELS), packet=packet.pk, actor="maintainer")
    out = capsys.readouterr().out
    assert "172 actions, 15 verbs, 35 nouns" in out
    version = GroundTruthVersion.objects.get(packet=packet, tier="provisional")
    call_command("export_ground_truth", "--version", str(version.pk), "--out", str(tmp_path / "export"))
    export = tmp_path / "export"
    assert (export / "gt.json").read_bytes() == (TASK / "steps/solve/tests/gt.json").read_bytes()
    assert (export / "vocabulary.json").read_bytes() == (TASK / "environment/vocabulary.json").read_bytes()
    gt = json.loads((export / "gt.json").read_bytes())
    result = score_submission("egocentric-f1-v2", gt, (export / "oracle.json").read_bytes(), frame_count=25692)
    assert result.reward == 1.0
    manifest = json.loads((export / "manifest.json").read_bytes())
    assert manifest["files"]["gt.json"]["bytes"] == (export / "gt.json").stat().st_size
    assert manifest["manifest"]["source_sha256"] == "6e834f814507f8fe384562f4c960023d0032b0c935a076c1385bd9a12974a8a6"


def test_the_parser_folds_eggs_and_sorts_like_the_published_builder():
    actions = parse_gtea_labels("<mix><eggs,bowl,fork> (3990-4981)\n\n<take><cup> (10-20)\n")
    assert actions == [
        {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 20},
        {"verb": "mix", "nouns": ["bowl", "egg", "fork"], "start_frame": 3990, "end_frame": 4981},
    ]


@pytest.mark.parametrize("line", ["<take>cup (1-2)", "<take><cup> (5-2)", "take cup"])
def test_the_parser_names_the_bad_line(line):
    with pytest.raises(LabelFormatError, match="line 2"):
        parse_gtea_labels("<take><cup> (1-2)\n" + line)


@pytest.mark.django_db
def test_import_refuses_a_bad_file_and_creates_nothing(packet, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("<take><cup> (1-2)\n<juggle><cup> (3-4)\n")
    with pytest.raises(CommandError, match="verb"):
        call_command("import_gtea_labels", str(bad), packet=packet.pk)
    assert not GroundTruthVersion.objects.exists()
