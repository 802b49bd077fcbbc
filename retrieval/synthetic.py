"""Synthetic corpora with known answers, for tests and benchmarks.

The world: every word has a fixed "concept vector" (:class:`HashTextEncoder`'s token
vector). A frame is a mix of an image-modality offset shared by all frames, the
current scene's word, clutter words present in the scene, the words of any moment
happening at that time, and temporally correlated noise. A query describes a moment
with a few words ("a chef pours a bottle"), so it is similar to the frames of its
moment; distractor moments show only part of the query (or all of it, faintly), and
clutter puts query words in unrelated scenes, so the task is not trivial.

Answers are exact: each query keeps the interval its words were placed on, plus, for
some queries, alternative annotations jittered like independent annotators' labels.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retrieval.encoders import HashTextEncoder
from retrieval.grid import Grid

SUBJECTS = "person man woman child girl boy dog cat chef player crowd couple teacher driver baby".split()
ACTIONS = (
    "opens closes cooks cuts washes throws catches reads writes paints drinks eats holds carries "
    "pours folds cleans lifts kicks plays fixes builds"
).split()
OBJECTS = (
    "door window book cup bottle ball bike car knife bowl laptop phone guitar towel box bag chair "
    "table camera sandwich lamp broom"
).split()
SCENES = "kitchen street beach office garden stadium classroom bedroom forest market studio park".split()
VOCABULARY = SUBJECTS + ACTIONS + OBJECTS + SCENES
STYLE_TOKEN = "__image_modality__"


@dataclass(frozen=True)
class SyntheticConfig:
    n_videos: int = 24
    min_duration: float = 30.0
    max_duration: float = 7200.0
    dim: int = 512
    queries_per_video: tuple[int, int] = (1, 3)
    grid_steps: tuple[float, ...] = (1.0, 2.0)
    explicit_grid_share: float = 0.1
    clip_lengths: tuple[float | None, ...] = (1.0, 2.0, None)
    max_moment: float = 150.0
    distractors: tuple[int, int] = (1, 3)
    alt_annotation_share: float = 0.3
    noise: float = 1.2
    clutter: float = 0.6
    word_noise: float = 0.5
    split: tuple[float, float, float] = (0.6, 0.1, 0.3)
    seed: int = 0
    encoder_seed: int = 0
    short_source_max: float = 600.0


@dataclass
class SyntheticVideo:
    video_id: str
    duration: float
    grid: Grid
    clip_length: float | None
    features: np.ndarray
    split: str

    def record(self, features_path: str) -> dict:
        row = {
            "video_id": self.video_id,
            "duration": self.duration,
            "grid": self.grid.to_spec(),
            "features": features_path,
        }
        if self.clip_length is not None:
            row["clip_length"] = self.clip_length
        return row


@dataclass
class SyntheticCorpus:
    videos: list[SyntheticVideo]
    queries: list[dict]
    encoder: HashTextEncoder
    config: SyntheticConfig | None = None
    meta: dict = field(default_factory=dict)

    def queries_in(self, split: str) -> list[dict]:
        return [q for q in self.queries if q["split"] == split]

    def video(self, video_id: str) -> SyntheticVideo:
        for v in self.videos:
            if v.video_id == video_id:
                return v
        raise KeyError(video_id)


@dataclass(frozen=True)
class Moment:
    start: float
    end: float
    words: tuple[str, ...]
    amplitude: float


def loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def render_frames(
    encoder: HashTextEncoder,
    duration: float,
    n_frames: int,
    edges: np.ndarray,
    moments: list[Moment],
    rng: np.random.Generator,
    *,
    noise: float = 1.2,
    clutter: float = 0.6,
    word_noise: float = 0.5,
) -> np.ndarray:
    """Frame features (``n_frames x dim``, float32, norm about 11 like raw CLIP)."""
    words = list(VOCABULARY)
    index = {w: i for i, w in enumerate(words)}
    for m in moments:
        for w in m.words:
            if w not in index:
                index[w] = len(words)
                words.append(w)
    basis = np.stack([encoder.token_vector(w) for w in words])
    centres = (edges[:-1] + edges[1:]) / 2
    act = np.zeros((n_frames, len(words)), dtype=np.float32)
    # scenes: a scene word, a background subject and clutter objects, piecewise constant
    t = 0.0
    while t < duration:
        length = loguniform(rng, 15.0, 400.0)
        sel = (centres >= t) & (centres < t + length)
        act[sel, index[str(rng.choice(SCENES))]] += 1.0
        act[sel, index[str(rng.choice(SUBJECTS))]] += rng.uniform(0.3, 0.8)
        for w in rng.choice(OBJECTS + ACTIONS, size=int(rng.integers(2, 6)), replace=False):
            act[sel, index[str(w)]] += clutter * rng.uniform(0.3, 1.0)
        t += length
    # moments, with a short ramp at each boundary (features lag the annotation a bit)
    for m in moments:
        ramp = 0.75
        inside = np.clip((centres - m.start) / ramp + 0.5, 0, 1) * np.clip((m.end - centres) / ramp + 0.5, 0, 1)
        for w in m.words:
            act[:, index[w]] += m.amplitude * inside
    act += word_noise * _ar1(rng, n_frames, len(words), rho=0.7)
    frames = act @ basis
    frames += 2.0 * encoder.token_vector(STYLE_TOKEN)
    # AR(1) noise: adjacent frames are highly similar, as in real CLIP features
    frames += (noise / math.sqrt(encoder.dim)) * _ar1(rng, n_frames, encoder.dim, rho=0.8)
    norms = np.linalg.norm(frames, axis=1, keepdims=True)
    return (frames * (11.0 / norms) * rng.uniform(0.9, 1.1, size=(n_frames, 1))).astype(np.float32)


def _ar1(rng: np.random.Generator, n: int, dim: int, *, rho: float) -> np.ndarray:
    """Unit-variance AR(1) noise along the first axis."""
    eps = rng.standard_normal((n, dim)).astype(np.float32)
    scale = math.sqrt(1 - rho * rho)
    out = np.empty_like(eps)
    out[0] = eps[0]
    for i in range(1, n):
        out[i] = rho * out[i - 1] + scale * eps[i]
    return out


def _place(
    rng: np.random.Generator, duration: float, length: float, taken: list[tuple[float, float]]
) -> tuple[float, float] | None:
    for _ in range(50):
        start = rng.uniform(0, duration - length)
        if all(start + length <= a or start >= b for a, b in taken):
            return start, start + length
    return None


def _make_grid(rng: np.random.Generator, cfg: SyntheticConfig, duration: float) -> Grid:
    if rng.uniform() < cfg.explicit_grid_share:
        gaps = rng.uniform(0.5, 3.0, size=int(duration / 0.5) + 2)
        points = np.concatenate([[0.0], np.cumsum(gaps)])
        points = points[points < duration - 0.25]
        return Grid.from_points([round(float(p), 3) for p in points] + [duration])
    return Grid.from_step(float(rng.choice(cfg.grid_steps)), duration)


def _annotations(rng: np.random.Generator, start: float, end: float, duration: float, alt: bool) -> list:
    out = [[round(start, 2), round(end, 2)]]
    if alt:
        length = end - start
        for _ in range(int(rng.integers(1, 4))):
            s = min(max(0.0, start + rng.normal(0, 0.12 * length)), duration - 0.5)
            e = min(duration, max(s + 0.5, end + rng.normal(0, 0.12 * length)))
            out.append([round(s, 2), round(e, 2)])
    return out


def _description(subject: str, action: str, obj: str) -> str:
    return f"a {subject} {action} a {obj}"


def _distractors(
    rng: np.random.Generator, cfg: SyntheticConfig, duration: float, length: float, words: tuple[str, ...], taken: list
) -> list[Moment]:
    """Moments that resemble the query: two of its three words, or all of them faintly."""
    out = []
    for _ in range(int(rng.integers(cfg.distractors[0], cfg.distractors[1] + 1))):
        d_len = length * rng.uniform(0.5, 1.5)
        d_span = _place(rng, duration, min(d_len, 0.9 * duration), taken)
        if d_span is None:
            continue
        taken.append(d_span)
        if rng.uniform() < 0.8:  # partial match: two of the three words
            keep = list(words)
            role = int(rng.integers(3))
            pool = [w for w in (SUBJECTS, ACTIONS, OBJECTS)[role] if w != words[role]]
            keep[role] = str(rng.choice(pool))
            out.append(Moment(d_span[0], d_span[1], tuple(keep), float(rng.uniform(0.6, 1.2))))
        else:  # the whole description, but faint
            out.append(Moment(d_span[0], d_span[1], words, float(rng.uniform(0.2, 0.4))))
    return out


def _video_queries(
    rng: np.random.Generator, cfg: SyntheticConfig, video_id: str, duration: float, split: str
) -> tuple[list[Moment], list[dict]]:
    """The moments placed in one video and the labelled queries that describe them."""
    taken: list[tuple[float, float]] = []
    moments: list[Moment] = []
    queries: list[dict] = []
    for qi in range(int(rng.integers(cfg.queries_per_video[0], cfg.queries_per_video[1] + 1))):
        length = loguniform(rng, 3.0, max(3.5, min(cfg.max_moment, 0.6 * duration)))
        span = _place(rng, duration, length, taken)
        if span is None:
            continue
        taken.append(span)
        subj, act, obj = rng.choice(SUBJECTS), rng.choice(ACTIONS), rng.choice(OBJECTS)
        words = (str(subj), str(act), str(obj))
        moments.append(Moment(span[0], span[1], words, float(rng.uniform(0.6, 1.2))))
        moments += _distractors(rng, cfg, duration, length, words, taken)
        alt = rng.uniform() < cfg.alt_annotation_share
        queries.append(
            {
                "query_id": f"{video_id}_q{qi}",
                "video_id": video_id,
                "description": _description(*words),
                "intervals": _annotations(rng, span[0], span[1], duration, alt),
                "source": "synthetic-short" if duration <= cfg.short_source_max else "synthetic-long",
                "split": split,
            }
        )
    return moments, queries


def generate_corpus(config: SyntheticConfig | None = None) -> SyntheticCorpus:
    """Generate videos (features in memory) and labelled queries for every split."""
    cfg = config or SyntheticConfig()
    rng = np.random.default_rng(cfg.seed)
    encoder = HashTextEncoder(dim=cfg.dim, seed=cfg.encoder_seed)
    splits = np.array(["train", "val", "test"])
    cum = np.cumsum(cfg.split) / sum(cfg.split)
    videos: list[SyntheticVideo] = []
    queries: list[dict] = []
    for vi in range(cfg.n_videos):
        duration = round(loguniform(rng, cfg.min_duration, cfg.max_duration), 2)
        split = str(splits[min(int(np.searchsorted(cum, (vi + 0.5) / cfg.n_videos)), 2)])
        grid = _make_grid(rng, cfg, duration)
        clip = cfg.clip_lengths[int(rng.integers(len(cfg.clip_lengths)))]
        n_frames = max(2, int(math.ceil(duration / clip)) if clip else int(round(duration / 1.5)))
        if clip:
            edges = np.minimum(np.arange(n_frames + 1) * clip, max(duration, (n_frames - 1) * clip + 1e-3))
        else:
            edges = np.linspace(0, duration, n_frames + 1)
        video_id = f"syn{cfg.seed}_{vi:04d}"
        moments, video_queries = _video_queries(rng, cfg, video_id, duration, split)
        queries += video_queries
        frames = render_frames(
            encoder, duration, n_frames, edges, moments, rng,
            noise=cfg.noise, clutter=cfg.clutter, word_noise=cfg.word_noise,
        )  # fmt: skip
        videos.append(SyntheticVideo(video_id, duration, grid, clip, frames, split))
    return SyntheticCorpus(videos, queries, encoder, cfg)


@dataclass(frozen=True)
class CorpusFiles:
    corpus_dir: Path
    records: Path
    train: Path
    val: Path
    test_requests: Path
    test_ground_truth: Path


def write_jsonl(path: str | os.PathLike, rows: Iterable[object]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def write_corpus(corpus: SyntheticCorpus, out_dir: str | os.PathLike, *, dtype: str = "float16") -> CorpusFiles:
    """Write the contract's corpus layout plus labelled splits and test requests.

    ``corpus/records.jsonl`` and ``corpus/features/*.npz``; ``corpus/train.jsonl`` and
    ``corpus/val.jsonl`` (labelled examples); ``test_queries.jsonl`` (requests: id,
    video, description) and ``test_gt.json`` (SCORING.md ground-truth format).
    """
    out = Path(out_dir)
    corpus_dir = out / "corpus"
    (corpus_dir / "features").mkdir(parents=True, exist_ok=True)
    records = []
    for video in corpus.videos:
        rel = f"features/{video.video_id}.npz"
        np.savez(corpus_dir / rel, features=video.features.astype(dtype))
        records.append(video.record(rel))
    write_jsonl(corpus_dir / "records.jsonl", records)
    labelled = ("query_id", "video_id", "description", "intervals", "source")
    write_jsonl(corpus_dir / "train.jsonl", ({k: q[k] for k in labelled} for q in corpus.queries_in("train")))
    write_jsonl(corpus_dir / "val.jsonl", ({k: q[k] for k in labelled} for q in corpus.queries_in("val")))
    test = corpus.queries_in("test")
    write_jsonl(out / "test_queries.jsonl", ({k: q[k] for k in ("query_id", "video_id", "description")} for q in test))
    gt = {"queries": [{k: q[k] for k in ("query_id", "video_id", "source", "intervals")} for q in test]}
    (out / "test_gt.json").write_text(json.dumps(gt, indent=2) + "\n", encoding="utf-8")
    return CorpusFiles(
        corpus_dir,
        corpus_dir / "records.jsonl",
        corpus_dir / "train.jsonl",
        corpus_dir / "val.jsonl",
        out / "test_queries.jsonl",
        out / "test_gt.json",
    )
