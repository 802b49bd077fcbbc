"""``manage.py score_submissions``: the maintainers' command line, with a progress bar."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotator.models import ScoringRun, SubmissionScore
from tests.grading.conftest import EGOCENTRIC, TENNIS


@pytest.mark.django_db
def test_a_folder_of_rollouts_is_scored_with_a_progress_bar(gtea_version):
    out, err = io.StringIO(), io.StringIO()
    folder = EGOCENTRIC / "calibration"
    call_command("score_submissions", str(folder), version=gtea_version.pk, scorer="egocentric-f1-v2",
                 include="*.solution.json", actor="maintainer", stdout=out, stderr=err)  # fmt: skip
    assert err.getvalue().splitlines()[-1].startswith("[##############################] 3/3")
    lines = out.getvalue().splitlines()
    run = ScoringRun.objects.get()
    assert lines[0].startswith(f"run {run.pk}: 3 submission(s) of packet {gtea_version.packet_id} against provisional")
    table = [line.split(maxsplit=3) for line in lines[2:5]]
    assert table == [
        ["1", "rollouts/claude-opus-4.8", "0.033613", "ok"],
        ["2", "rollouts/claude-opus-4.8.partial", "0", "ok"],
        ["2", "rollouts/codex-gpt-5.6-sol", "0", "invalid solution: solution must be an object containing actions"],
    ]
    assert lines[-1] == f"run {run.pk}: 3 scored, 0 failed, 0 pending"
    for score in SubmissionScore.objects.select_related("submission"):
        golden = folder / f"{score.submission.label}.reward.json"
        assert bytes(score.reward_json) == golden.read_bytes()


@pytest.mark.django_db
def test_one_labelled_file_and_the_refusals(tennis_version, gtea_version):
    path = TENNIS / "rollouts/codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json"
    out = io.StringIO()
    call_command("score_submissions", str(path), version=tennis_version.pk, scorer="hierarchical-bottleneck-v1",
                 label="codex v10", stdout=out, stderr=io.StringIO())  # fmt: skip
    assert out.getvalue().splitlines()[2].split(maxsplit=1) == ["1", "codex v10    0.3305  ok"]
    with pytest.raises(CommandError, match="scores actions ledgers; this packet's task kind is break_points"):
        call_command("score_submissions", str(path), version=tennis_version.pk, scorer="egocentric-f1-v2")
    with pytest.raises(CommandError, match="no ground-truth version 999"):
        call_command("score_submissions", str(path), version=999, scorer="egocentric-f1-v2")
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("score_submissions", "missing.json", version=gtea_version.pk, scorer="egocentric-f1-v2")
