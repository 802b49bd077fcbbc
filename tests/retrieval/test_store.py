"""The feature store: corpus records in, a read-only memory-mapped index out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retrieval.features import FeatureError, frame_edges, load_feature_array, resample_to_segments
from retrieval.store import FeatureIndex, UnknownVideoError, build_index

REPO = Path(__file__).resolve().parents[2]
UNIVTG = REPO / "data" / "univtg-demo-features" / "vid.npz"


def write_records(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_segments_average_the_frames_they_overlap():
    frames = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], np.float32)
    edges = frame_edges(4, 4.0, 1.0)  # one frame per second
    seg = resample_to_segments(frames, edges, np.array([0.0, 2.0, 3.5, 4.0]))
    s = 1 / np.sqrt(2)
    np.testing.assert_allclose(seg[0], [s, s], atol=1e-6)  # frames 0 and 1 equally
    # [2, 3.5]: frame 2 for 1 s, frame 3 for 0.5 s
    np.testing.assert_allclose(seg[1], np.array([1.0, 0.5]) / np.hypot(1.0, 0.5), atol=1e-6)
    np.testing.assert_allclose(seg[2], [0.0, 1.0], atol=1e-6)


def test_real_clip_features_are_normalised_and_keep_their_temporal_smoothness(tmp_path):
    raw = load_feature_array(UNIVTG)
    assert raw.shape == (15, 512) and 8 < np.linalg.norm(raw, axis=1).mean() < 14
    corpus = write_records(
        tmp_path / "c", [{"video_id": "demo", "duration": 30, "grid": {"step": 2}, "features": str(UNIVTG)}]
    )
    build_index(corpus, tmp_path / "i", log=lambda m: None)
    rows = FeatureIndex(tmp_path / "i").segment_features("demo")
    assert rows.shape == (15, 512)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=2e-3)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    adjacent_raw = (unit[1:] * unit[:-1]).sum(1)
    adjacent_idx = (rows[1:] * rows[:-1]).sum(1)
    np.testing.assert_allclose(adjacent_idx, adjacent_raw, atol=3e-3)


def test_moment_detr_layout_is_found_without_a_features_key(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    np.savez(corpus / "vidA.npz", features=np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32))
    write_records(corpus, [{"video_id": "vidA", "duration": 10, "grid": {"step": 2}}])
    manifest = build_index(corpus, tmp_path / "i", log=lambda m: None)
    assert manifest["n_videos"] == 1 and manifest["dim"] == 8 and manifest["n_videos_without_features"] == 0


def test_unreadable_features_keep_the_video_with_its_grid(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    np.savez(corpus / "good.npz", features=np.ones((3, 4), np.float32))
    (corpus / "bad.npz").write_bytes(b"not a zip")
    np.savez(corpus / "nan.npz", features=np.full((3, 4), np.nan, np.float32))
    rows = [
        {"video_id": "good", "duration": 6, "grid": {"step": 2}, "features": "good.npz"},
        {"video_id": "bad", "duration": 6, "grid": [0, 3, 6], "features": "bad.npz"},
        {"video_id": "nan", "duration": 6, "grid": {"step": 3}, "features": "nan.npz"},
        {"video_id": "missing", "duration": 6, "grid": {"step": 3}, "features": "nowhere.npz"},
    ]
    warnings: list[str] = []
    manifest = build_index(write_records(corpus, rows), tmp_path / "i", log=warnings.append)
    index = FeatureIndex(tmp_path / "i")
    assert manifest["n_videos_without_features"] == 3 and len(warnings) >= 3
    assert index.video("good").features_ok
    assert not index.video("bad").features_ok and index.video("bad").grid.n_points == 3


def test_bad_and_duplicate_records_are_skipped_and_reported(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    np.savez(corpus / "a.npz", features=np.ones((3, 4), np.float32))
    (corpus / "records.jsonl").write_text(
        "\n".join(
            [
                json.dumps({"video_id": "a", "duration": 6, "grid": {"step": 2}, "features": "a.npz"}),
                "not json",
                json.dumps({"video_id": "a", "duration": 6, "grid": {"step": 2}, "features": "a.npz"}),
                json.dumps({"video_id": "b", "duration": -1, "grid": {"step": 2}}),
                json.dumps({"video_id": "c", "duration": 6, "grid": [0, 5, 2]}),
            ]
        )
    )
    warnings: list[str] = []
    build_index(corpus, tmp_path / "i", log=warnings.append)
    assert FeatureIndex(tmp_path / "i").video_ids() == ["a"]
    assert len(warnings) == 4


def test_the_opened_index_is_read_only_and_knows_its_videos(small_index, small_corpus):
    assert len(small_index) == len(small_corpus.videos)
    assert not small_index.segments.flags.writeable
    with pytest.raises(UnknownVideoError):
        small_index.video("no-such-video")
    v = small_corpus.videos[3]
    entry = small_index.video(v.video_id)
    np.testing.assert_array_equal(entry.grid.times, v.grid.times)
    assert small_index.segment_features(v.video_id).shape == (v.grid.n_segments, 512)


def test_feature_arrays_of_the_wrong_shape_are_rejected(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((2, 3, 4), np.float32))
    with pytest.raises(FeatureError):
        load_feature_array(tmp_path / "x.npy")
