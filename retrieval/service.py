"""The ``run`` stage: answer a file of requests, one independent row at a time.

Each request line is handled on its own: a malformed line, an unknown video or an
encoder failure affects that request only. A request that cannot be scored but whose
video is known still gets a legal (fallback) interval. Rows are written and flushed
one by one, so the rows already written stay usable if the process is stopped.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.predictor import MomentPredictor, Prediction
from retrieval.store import UnknownVideoError


@dataclass(frozen=True)
class Request:
    query_id: object  # echoed back unchanged (a string in the contract)
    video_id: str
    description: str


class RequestError(ValueError):
    """A request line that cannot be read."""


def parse_request(line: str) -> Request:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise RequestError(f"not JSON ({exc})") from exc
    if not isinstance(row, dict):
        raise RequestError("not a JSON object")
    qid = row.get("query_id", row.get("qid"))
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
        raise RequestError("missing query_id")
    vid = row.get("video_id", row.get("vid"))
    if not isinstance(vid, str) or not vid:
        raise RequestError(f"query {qid!r}: missing video_id")
    text = row.get("description", row.get("query", ""))
    if not isinstance(text, str):
        raise RequestError(f"query {qid!r}: description must be a string")
    return Request(qid, vid, text)


@dataclass
class RunSummary:
    requests: int = 0
    written: int = 0
    scored: int = 0
    fallback: int = 0
    skipped: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict:
        lat = sorted(self.latencies_ms)

        def pct(p: float) -> float:
            return round(lat[min(len(lat) - 1, int(math.ceil(p * len(lat))) - 1)], 3) if lat else 0.0

        return {
            "requests": self.requests,
            "written": self.written,
            "scored": self.scored,
            "fallback": self.fallback,
            "skipped": self.skipped,
            "p50_ms": pct(0.5),
            "p95_ms": pct(0.95),
        }


def answer(predictor: MomentPredictor, request: Request) -> Prediction:
    """Predict, or fall back to a legal interval when scoring fails."""
    try:
        return predictor.predict(request.video_id, request.description, query_id=str(request.query_id))
    except UnknownVideoError:
        raise
    except Exception as exc:  # one request's failure must not affect the others
        prediction = predictor.fallback(request.video_id)
        raise _Fallback(prediction, exc) from exc


class _Fallback(Exception):
    def __init__(self, prediction: Prediction, cause: Exception) -> None:
        super().__init__(str(cause))
        self.prediction = prediction
        self.cause = cause


def iter_lines(path: str | os.PathLike) -> Iterator[str]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                yield line


def run_requests(
    predictor: MomentPredictor,
    lines: Iterable[str],
    output: str | os.PathLike,
    *,
    log: Callable[[str], None] | None = None,
) -> RunSummary:
    """Answer every request line, writing one JSONL row per answerable request."""
    log = log or (lambda msg: print(f"retrieval: {msg}", file=sys.stderr))
    out_path = Path(output)
    if out_path.parent and not out_path.parent.exists():
        out_path.parent.mkdir(parents=True, exist_ok=True)
    summary = RunSummary()
    seen: set[str] = set()
    with open(out_path, "w", encoding="utf-8") as out:
        for n, line in enumerate(lines, 1):
            summary.requests += 1
            try:
                request = parse_request(line)
            except RequestError as exc:
                summary.skipped += 1
                log(f"request line {n} skipped: {exc}")
                continue
            key = str(request.query_id)
            if key in seen:
                summary.skipped += 1
                log(f"request line {n}: query_id {key!r} repeats, only the first is answered")
                continue
            seen.add(key)
            t0 = time.perf_counter()
            try:
                prediction = answer(predictor, request)
                summary.scored += 1
            except UnknownVideoError:
                summary.skipped += 1
                log(f"query {key!r}: video {request.video_id!r} is not in the index, no legal interval")
                continue
            except _Fallback as fb:
                prediction = fb.prediction
                summary.fallback += 1
                log(f"query {key!r}: {type(fb.cause).__name__}: {fb.cause}; fallback interval")
            except Exception as exc:  # even the fallback failed (a corrupt index row)
                summary.skipped += 1
                log(f"query {key!r}: {type(exc).__name__}: {exc}; no row")
                continue
            summary.latencies_ms.append((time.perf_counter() - t0) * 1000)
            out.write(json.dumps({"query_id": request.query_id, "start": prediction.start, "end": prediction.end}))
            out.write("\n")
            out.flush()
            summary.written += 1
    return summary
