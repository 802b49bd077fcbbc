"""The synthetic corpus: deterministic, known answers, and hard enough to separate rankers."""

from __future__ import annotations

import numpy as np

from retrieval.encoders import HashTextEncoder
from retrieval.grid import Grid
from retrieval.predictor import MomentPredictor, fallback_interval
from retrieval.synthetic import SyntheticConfig, generate_corpus
from tests.retrieval.helpers import ground_truth, moment_quality


def test_generation_is_deterministic_for_a_seed():
    cfg = SyntheticConfig(n_videos=3, max_duration=200, seed=5)
    a, b = generate_corpus(cfg), generate_corpus(cfg)
    assert a.queries == b.queries
    for va, vb in zip(a.videos, b.videos, strict=True):
        np.testing.assert_array_equal(va.features, vb.features)
    assert generate_corpus(SyntheticConfig(n_videos=3, max_duration=200, seed=6)).queries != a.queries


def test_videos_span_thirty_seconds_to_two_hours_with_legal_answers():
    short = generate_corpus(SyntheticConfig(n_videos=2, min_duration=30, max_duration=30, seed=1))
    long = generate_corpus(SyntheticConfig(n_videos=1, min_duration=7200, max_duration=7200, seed=1))
    assert {v.duration for v in short.videos} == {30.0} and long.videos[0].duration == 7200.0
    assert long.videos[0].features.shape[1] == 512
    for corpus in (short, long):
        for q in corpus.queries:
            v = corpus.video(q["video_id"])
            assert all(0 <= s < e <= v.duration for s, e in q["intervals"])
            x, a, b = v.grid.best_interval(q["intervals"])
            assert x > 0.3 and a < b


def test_frames_look_like_raw_clip_features():
    corpus = generate_corpus(SyntheticConfig(n_videos=2, max_duration=300, seed=2))
    f = corpus.videos[0].features
    norms = np.linalg.norm(f, axis=1)
    assert 9 < norms.mean() < 13
    unit = f / norms[:, None]
    adjacent = (unit[1:] * unit[:-1]).sum(1)
    assert 0.75 < np.median(adjacent) < 0.999


def test_a_query_is_most_similar_to_frames_inside_its_moment():
    corpus = generate_corpus(SyntheticConfig(n_videos=6, max_duration=600, seed=4))
    enc = corpus.encoder
    inside_higher = 0
    for q in corpus.queries:
        v = corpus.video(q["video_id"])
        unit = v.features / np.linalg.norm(v.features, axis=1, keepdims=True)
        qv = enc.encode(q["description"])
        sim = unit @ (qv / np.linalg.norm(qv))
        centres = (np.arange(len(sim)) + 0.5) * (v.clip_length or v.duration / len(sim))
        s, e = q["intervals"][0]
        inside = (centres > s) & (centres < e)
        inside_higher += sim[inside].mean() > sim[~inside].mean() + 0.02
    assert inside_higher == len(corpus.queries)


def test_zero_shot_ranking_beats_a_fixed_prior_and_the_oracle_scores_one(small_index, small_corpus):
    queries = small_corpus.queries
    records = [v.record("unused") for v in small_corpus.videos]
    gt = ground_truth(queries)
    p = MomentPredictor(small_index, HashTextEncoder(), device="cpu")
    zero_shot, prior, oracle = [], [], []
    for q in queries:
        grid: Grid = small_index.video(q["video_id"]).grid
        pred = p.predict(q["video_id"], q["description"])
        zero_shot.append({"query_id": q["query_id"], "start": pred.start, "end": pred.end})
        a, b = fallback_interval(grid)
        prior.append({"query_id": q["query_id"], "start": grid.times[a], "end": grid.times[b]})
        _, a, b = grid.best_interval(q["intervals"])
        oracle.append({"query_id": q["query_id"], "start": grid.times[a], "end": grid.times[b]})
    assert moment_quality(oracle, gt, records)["raw_quality"] == 1.0
    zs = moment_quality(zero_shot, gt, records)["raw_quality"]
    fixed = moment_quality(prior, gt, records)["raw_quality"]
    assert zs > fixed + 0.2
