"""One L2 normalisation serves both the build path and the query path."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import torch

import retrieval
from retrieval import encoders, features, predictor, store, train
from retrieval.features import l2_normalize
from retrieval.predictor import MomentPredictor

PACKAGE = Path(retrieval.__file__).parent


def test_l2_normalize_gives_unit_rows_for_numpy_and_torch_alike():
    x = np.random.default_rng(0).normal(size=(5, 7)).astype(np.float32) * 11
    a = l2_normalize(x)
    b = l2_normalize(torch.from_numpy(x)).numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_l2_normalize_keeps_a_zero_vector_zero():
    out = l2_normalize(np.zeros((2, 4)))
    assert np.all(out == 0) and np.all(np.isfinite(out))


def test_every_pipeline_module_uses_the_same_normalisation_function():
    for module in (store, encoders, predictor, train):
        if hasattr(module, "l2_normalize"):
            assert module.l2_normalize is features.l2_normalize
    assert predictor.l2_normalize is features.l2_normalize
    assert encoders.l2_normalize is features.l2_normalize


def test_no_other_module_normalises_vectors_on_its_own():
    # synthetic.py scales generated frames to CLIP-like norms (about 11); that is data
    # generation, not the pipeline, so it is the one exception.
    offenders = []
    for path in PACKAGE.glob("*.py"):
        if path.name in ("features.py", "synthetic.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Attribute):
                continue
            own_layer = isinstance(node.value, ast.Name) and node.value.id == "self"
            if node.attr in ("normalize", "vector_norm") or (node.attr == "norm" and not own_layer):
                offenders.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert offenders == []


def test_index_rows_and_query_vectors_are_unit_length(small_index):
    rows = np.asarray(small_index.segments, dtype=np.float32)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=2e-3)  # float16 storage
    p = MomentPredictor(small_index, encoders.HashTextEncoder(), device="cpu")
    q = p.query_vector("a chef pours a bottle")
    assert abs(float(torch.linalg.vector_norm(q)) - 1.0) < 1e-5


def test_similarity_equals_cosine_of_raw_frame_and_raw_text_vectors(small_corpus, small_index):
    video = small_corpus.videos[0]
    enc = small_corpus.encoder
    raw_q = enc.encode("a dog opens a door")
    p = MomentPredictor(small_index, enc, device="cpu")
    sim = (p.video_tensor(video.video_id) @ p.query_vector("a dog opens a door")).numpy()
    # independent computation: overlap-weighted mean of unit frames per segment, then
    # the cosine with the raw query
    frames = video.features / np.linalg.norm(video.features, axis=1, keepdims=True)
    edges = features.frame_edges(len(frames), video.duration, video.clip_length)
    times = video.grid.times
    expected = []
    for j in range(len(times) - 1):
        w = np.clip(np.minimum(edges[1:], times[j + 1]) - np.maximum(edges[:-1], times[j]), 0, None)
        mean = (w[:, None] * frames).sum(0)
        expected.append(mean @ raw_q / (np.linalg.norm(mean) * np.linalg.norm(raw_q)))
    np.testing.assert_allclose(sim, np.array(expected), atol=3e-3)
