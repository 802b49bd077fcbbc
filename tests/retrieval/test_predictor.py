"""The predictor facade: device resolved once, legal answers, independent requests."""

from __future__ import annotations

import pytest
import torch

from retrieval.device import DeviceUnavailableError, resolve_device
from retrieval.encoders import HashTextEncoder
from retrieval.predictor import MomentPredictor, fallback_interval
from retrieval.store import UnknownVideoError
from tests.retrieval.conftest import requires_gpu


def test_auto_device_is_cuda_only_when_cuda_is_available():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device("cpu").type == "cpu"
    with pytest.raises(ValueError):
        resolve_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_asking_for_cuda_without_a_gpu_fails_loudly():
    with pytest.raises(DeviceUnavailableError):
        resolve_device("cuda")


def test_predictions_are_legal_grid_intervals(small_index, small_corpus):
    p = MomentPredictor(small_index, HashTextEncoder(), device="cpu")
    assert p.device == torch.device("cpu")
    for q in small_corpus.queries:
        pred = p.predict(q["video_id"], q["description"])
        grid = small_index.video(q["video_id"]).grid
        assert grid.is_legal(pred.start, pred.end)
        assert pred.n_scored == grid.n_intervals and 1 <= pred.n_candidates <= 64


def test_inference_runs_without_autograd(small_index, small_corpus):
    p = MomentPredictor(small_index, HashTextEncoder(), device="cpu")
    q = small_corpus.queries[0]
    with torch.enable_grad():
        ranking = p.rank(q["video_id"], p.query_vector(q["description"]))
        assert p.video_tensor(q["video_id"]).is_inference()
    assert ranking.fine.shape == (len(ranking.candidates),)


def test_a_request_gets_the_same_answer_alone_or_after_others(small_index, small_corpus):
    queries = small_corpus.queries
    alone = MomentPredictor(small_index, HashTextEncoder(), device="cpu").predict(
        queries[-1]["video_id"], queries[-1]["description"]
    )
    busy = MomentPredictor(small_index, HashTextEncoder(), device="cpu", video_cache=1)
    for q in queries:
        busy.predict(q["video_id"], q["description"])
    again = busy.predict(queries[-1]["video_id"], queries[-1]["description"])
    assert (alone.start, alone.end) == (again.start, again.end)


def test_unknown_videos_raise_and_known_ones_have_a_legal_fallback(small_index):
    p = MomentPredictor(small_index, HashTextEncoder(), device="cpu")
    with pytest.raises(UnknownVideoError):
        p.predict("nope", "a dog")
    vid = small_index.video_ids()[0]
    fb = p.fallback(vid)
    assert small_index.video(vid).grid.is_legal(fb.start, fb.end) and fb.method == "fallback"


def test_fallback_interval_is_legal_even_on_a_two_point_grid():
    from retrieval.grid import Grid

    for grid in (Grid.from_step(5, 5), Grid.from_step(1, 3), Grid.from_points([0, 0.5, 9])):
        a, b = fallback_interval(grid)
        assert 0 <= a < b < grid.n_points


@pytest.mark.gpu
@requires_gpu
def test_cuda_predictor_gives_the_cpu_answers(small_index, small_corpus):
    cpu = MomentPredictor(small_index, HashTextEncoder(), device="cpu")
    gpu = MomentPredictor(small_index, HashTextEncoder(), device="cuda")
    assert gpu.device.type == "cuda"
    agree = 0
    for q in small_corpus.queries:
        a = cpu.predict(q["video_id"], q["description"])
        b = gpu.predict(q["video_id"], q["description"])
        agree += (a.start, a.end) == (b.start, b.end)
    assert agree >= len(small_corpus.queries) - 1
