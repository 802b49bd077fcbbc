"""Real annotation structure (QVHighlights, Charades-STA) with synthetic features.

The repository ships real annotations under ``data/`` (relative to the repository
root) but no video features. These loaders read the real durations, windows and query
texts; :func:`corpus_from_annotations` then renders synthetic frame features in which
each query's words appear inside its annotated windows, so the whole build/run path
can be exercised on the real grids, window lengths, window counts and texts.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.encoders import HashTextEncoder, tokenize
from retrieval.features import frame_edges
from retrieval.grid import Grid
from retrieval.synthetic import Moment, SyntheticCorpus, SyntheticVideo, render_frames

QVHIGHLIGHTS_VAL = Path("qvhighlights") / "highlight_val_release.jsonl"
CHARADES_TEST = Path("charades-lighthouse") / "charades_test_release.jsonl"
CHARADES_REANNOTATED = tuple(Path("charades-sta-reannotated") / f"test_0{i}.csv" for i in range(3))

#: Grids and feature clip lengths as the public feature releases use them.
SOURCE_LAYOUT = {"qvhighlights": (2.0, 2.0), "charades-sta": (1.0, 1.0)}


def repo_data_dir() -> Path:
    """``data/`` at the repository root (this package's parent folder)."""
    return Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class AnnotatedQuery:
    query_id: str
    video_id: str
    description: str
    duration: float
    intervals: tuple[tuple[float, float], ...]  # the first is the original label
    source: str


def load_qvhighlights(path: str | Path | None = None, limit: int | None = None) -> list[AnnotatedQuery]:
    path = Path(path) if path else repo_data_dir() / QVHIGHLIGHTS_VAL
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            windows = tuple((float(s), float(e)) for s, e in row["relevant_windows"])
            out.append(
                AnnotatedQuery(
                    f"qv{row['qid']}", row["vid"], row["query"], float(row["duration"]), windows, "qvhighlights"
                )
            )
            if limit is not None and len(out) >= limit:
                break
    return out


def load_charades_sta(
    path: str | Path | None = None,
    *,
    reannotated: Sequence[str | Path] | bool = True,
    limit_videos: int | None = None,
) -> list[AnnotatedQuery]:
    """Charades-STA test queries; with ``reannotated`` the five extra labels per
    re-annotated query (percent of duration, converted to seconds) are added."""
    data = repo_data_dir()
    path = Path(path) if path else data / CHARADES_TEST
    extra: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    if reannotated:
        files = CHARADES_REANNOTATED if reannotated is True else reannotated
        for f in files:
            f = Path(f)
            with open(f if f.is_absolute() else data / f, encoding="utf-8", newline="") as fh:
                for row in csv.DictReader(fh):
                    vid = row["video_id"].removesuffix(".mp4")
                    extra[(vid, row["description"].strip().lower())].append((float(row["start"]), float(row["end"])))
    out = []
    videos: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            vid = row["vid"]
            if limit_videos is not None and vid not in videos and len(videos) >= limit_videos:
                continue
            videos.add(vid)
            duration = float(row["duration"])
            windows = [(float(s), float(e)) for s, e in row["relevant_windows"]]
            for s, e in extra.get((vid, row["query"].strip().lower()), []):
                windows.append((s * duration / 100.0, e * duration / 100.0))
            windows = [w for w in windows if w[1] > w[0]]
            out.append(AnnotatedQuery(f"ch{row['qid']}", vid, row["query"], duration, tuple(windows), "charades-sta"))
    return out


def corpus_from_annotations(
    queries: Iterable[AnnotatedQuery],
    *,
    dim: int = 512,
    seed: int = 0,
    encoder_seed: int = 0,
    noise: float = 1.2,
    clutter: float = 0.6,
    word_noise: float = 0.5,
) -> SyntheticCorpus:
    """Videos with the annotations' durations and grids, features rendered so that
    every query's words are present in its original windows."""
    rng = np.random.default_rng(seed)
    encoder = HashTextEncoder(dim=dim, seed=encoder_seed)
    by_video: dict[str, list[AnnotatedQuery]] = defaultdict(list)
    for q in queries:
        by_video[q.video_id].append(q)
    videos, rows = [], []
    for vid, qs in by_video.items():
        duration = max(q.duration for q in qs)
        step, clip = SOURCE_LAYOUT.get(qs[0].source, (2.0, 2.0))
        grid = Grid.from_step(step, duration)
        n_frames = max(2, int(math.ceil(duration / clip)))
        edges = frame_edges(n_frames, duration, clip)
        moments = []
        for q in qs:
            words = tuple(tokenize(q.description))
            original = [q.intervals[0]] if q.source == "charades-sta" else list(q.intervals)
            amp = float(rng.uniform(0.6, 1.2))
            moments += [Moment(s, min(e, duration), words, amp) for s, e in original if words]
        frames = render_frames(
            encoder, duration, n_frames, edges, moments, rng, noise=noise, clutter=clutter, word_noise=word_noise
        )
        videos.append(SyntheticVideo(vid, duration, grid, clip, frames, "test"))
        for q in qs:
            rows.append(
                {
                    "query_id": q.query_id,
                    "video_id": vid,
                    "description": q.description,
                    "intervals": [list(iv) for iv in q.intervals],
                    "source": q.source,
                    "split": "test",
                }
            )
    return SyntheticCorpus(videos, rows, encoder, None, {"from": "annotations"})


def structure_summary(queries: Sequence[AnnotatedQuery]) -> dict:
    """Counts that describe an annotation set: durations, windows, grid alignment."""
    if not queries:
        return {"queries": 0}
    durations = np.array([q.duration for q in queries])
    lengths = np.array([e - s for q in queries for s, e in q.intervals])
    step = SOURCE_LAYOUT.get(queries[0].source, (2.0, 2.0))[0]
    ends = np.array([t for q in queries for iv in q.intervals for t in iv])
    on_grid = np.abs(ends / step - np.round(ends / step)) < 1e-6
    beyond = sum(e > q.duration + 1e-6 for q in queries for _, e in q.intervals)
    return {
        "queries": len(queries),
        "videos": len({q.video_id for q in queries}),
        "duration_min": float(durations.min()),
        "duration_median": float(np.median(durations)),
        "duration_max": float(durations.max()),
        "windows_per_query_max": max(len(q.intervals) for q in queries),
        "window_seconds_median": float(np.median(lengths)),
        "endpoints_on_grid_share": float(on_grid.mean()),
        "windows_past_duration": int(beyond),
        "grid_step": step,
    }
