"""Real annotation structure from data/: QVHighlights val and Charades-STA (with the
five-annotator re-annotation), run end to end with synthetic features."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.annotations import (
    corpus_from_annotations,
    load_charades_sta,
    load_qvhighlights,
    structure_summary,
)
from retrieval.encoders import HashTextEncoder
from retrieval.predictor import MomentPredictor
from retrieval.store import FeatureIndex, build_index
from retrieval.synthetic import write_corpus
from tests.retrieval.conftest import read_jsonl
from tests.retrieval.helpers import ground_truth, moment_quality


@pytest.fixture(scope="module")
def qvhighlights():
    return load_qvhighlights()


@pytest.fixture(scope="module")
def charades():
    return load_charades_sta()


def test_qvhighlights_val_windows_lie_on_its_two_second_grid(qvhighlights):
    summary = structure_summary(qvhighlights)
    assert summary["queries"] == 1550
    assert summary["endpoints_on_grid_share"] == 1.0
    assert summary["windows_past_duration"] == 0
    assert summary["duration_median"] == 150
    assert 1 <= summary["windows_per_query_max"] <= 25


def test_charades_sta_windows_are_in_seconds_off_a_one_second_grid(charades):
    summary = structure_summary(charades)
    assert summary["queries"] == 3720 and summary["videos"] == 1334
    assert summary["endpoints_on_grid_share"] < 0.5  # 0.1 s precision labels
    assert summary["duration_max"] < 200


def test_charades_re_annotations_add_five_labels_converted_from_percent(charades):
    multi = [q for q in charades if len(q.intervals) > 1]
    assert len(multi) == 1000
    assert all(len(q.intervals) == 6 for q in multi)
    for q in multi:
        assert all(0 <= s < e <= q.duration + 1e-6 for s, e in q.intervals[1:])


def test_real_structure_end_to_end_with_synthetic_features(qvhighlights, charades, tmp_path):
    picked = qvhighlights[:10] + [q for q in charades if len(q.intervals) > 1][:10]
    corpus = corpus_from_annotations(picked, seed=3)
    files = write_corpus(corpus, tmp_path)
    build_index(files.corpus_dir, tmp_path / "index", encoder_spec=HashTextEncoder().spec(), log=lambda m: None)
    index = FeatureIndex(tmp_path / "index")
    records = read_jsonl(files.records)
    assert {r["grid"]["step"] for r in records} == {1.0, 2.0}
    p = MomentPredictor(index, HashTextEncoder(), device="cpu")
    rows = []
    for q in corpus.queries:
        pred = p.predict(q["video_id"], q["description"])
        assert index.video(q["video_id"]).grid.is_legal(pred.start, pred.end)
        rows.append({"query_id": q["query_id"], "start": pred.start, "end": pred.end})
    quality = moment_quality(rows, ground_truth(corpus.queries), records)
    assert set(quality["per_source"]) == {"qvhighlights", "charades-sta"}
    assert quality["invalid"] == 0 and quality["raw_quality"] > 0.3
    normalisers = [index.video(q["video_id"]).grid.best_interval(q["intervals"])[0] for q in corpus.queries]
    assert np.mean(normalisers) < 1.0  # Charades labels are not on the 1 s grid
