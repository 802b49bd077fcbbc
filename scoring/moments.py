"""Moment search: ``moment-utility-v1`` (SCORING.md section 3).

Each request gets one interval; x is its best IoU with the acceptable intervals,
u(x) = 0.7 * mean(x >= 0.5, x >= 0.7, x >= 0.9) + 0.3 * x, normalised by the best
utility any legal grid interval reaches (closed form, see :func:`best_grid_iou`).
Query scores are averaged within each source, sources weigh equally, and the raw
quality is mapped to the reward with the anchors a and b.

IoU is computed exactly (``fractions.Fraction`` of the float endpoints), so the
thresholds 0.5 / 0.7 / 0.9 are never missed by a rounding error.
"""

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence

from ._annotations import TYPE_CHECKING, Any
from ._records import dataclass
from .constants import MOMENTS_DEFAULT_A, MOMENTS_DEFAULT_B, MOMENTS_DEPTH_LIMIT, MOMENTS_MAX_BYTES
from .errors import GroundTruthError, ParameterError
from .jsonio import dumps_indented, loads, loads_like_verifier
from .results import ScoreResult, with_details_encoded_on_read

if TYPE_CHECKING:
    from fractions import Fraction
    from typing import TypeGuard

DEFAULT_A = MOMENTS_DEFAULT_A
DEFAULT_B = MOMENTS_DEFAULT_B
GRID_TOLERANCE = 1e-6
MAX_SOLUTION_BYTES = MOMENTS_MAX_BYTES
DEPTH_LIMIT = MOMENTS_DEPTH_LIMIT  # per line; deeper lines are invalid rows
MAX_ROW_MESSAGES = 10  # row problems named in the reason
MAX_GRID_POINTS = 2_000_000
_THRESHOLD_TERMS = ((1, 2), (7, 10), (9, 10))  # THRESHOLDS (Fractions, built on first use)
DEFAULT_SOURCE = "default"


# ---------------------------------------------------------------------------- grids


def is_finite_number(value: object) -> "TypeGuard[float]":
    """A JSON number (not a boolean) that converts to a finite float."""
    if type(value) is float:  # the common case: inf - inf and nan - nan are nan
        return value - value == 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def grid_from_step(duration: object, step: object) -> list[float]:
    """0, s, 2s, ... up to the duration, plus the duration when it is not a multiple."""
    if not is_finite_number(duration) or duration <= 0:
        raise ParameterError(f"duration must be a positive number, got {duration!r}")
    if not is_finite_number(step) or step <= 0:
        raise ParameterError(f"grid step must be a positive number, got {step!r}")
    count = math.floor(duration / step + GRID_TOLERANCE / step)
    if count + 1 > MAX_GRID_POINTS:
        raise ParameterError(f"grid has more than {MAX_GRID_POINTS} points")
    points = [k * step for k in range(count + 1)]
    if duration - points[-1] > GRID_TOLERANCE:
        points.append(float(duration))
    return points


def grid_from_record(record: Mapping[str, Any]) -> list[float]:
    """The time grid of one corpus record (``grid`` a list or ``{"step": s}``)."""
    grid = record.get("grid")
    if isinstance(grid, Mapping):
        return grid_from_step(record.get("duration"), grid.get("step"))
    if isinstance(grid, list):
        if len(grid) > MAX_GRID_POINTS or not all(is_finite_number(t) for t in grid):
            raise ParameterError(f"grid of {record.get('video_id')!r} is not a list of numbers")
        return sorted(set(float(t) for t in grid))
    raise ParameterError(f"record {record.get('video_id')!r} has no usable grid")


def corpus_grids(corpus: object) -> dict[str, list[float]]:
    """Grids by video id from corpus records (a list of records, a mapping of video id
    to record, or a mapping of video id to an explicit grid list)."""
    if isinstance(corpus, Mapping):
        items = []
        for video_id, value in corpus.items():
            record = value if isinstance(value, Mapping) else {"grid": value}
            items.append({**record, "video_id": video_id})
    elif isinstance(corpus, (list, tuple)):
        items = list(corpus)
    else:
        raise ParameterError("corpus must be a list of records.jsonl rows")
    grids: dict[str, list[float]] = {}
    step_grids: dict[tuple[Any, ...], list[float]] = {}  # videos of one duration share a step grid
    for record in items:
        if not isinstance(record, Mapping) or not isinstance(record.get("video_id"), str):
            raise ParameterError("every corpus record needs a string video_id")
        grid = record.get("grid")
        if isinstance(grid, Mapping):
            key = (repr(record.get("duration")), repr(grid.get("step")))
            if key not in step_grids:
                step_grids[key] = grid_from_record(record)
            grids[record["video_id"]] = step_grids[key]
        else:
            grids[record["video_id"]] = grid_from_record(record)
    return grids


def parse_corpus_jsonl(text: str) -> list[dict[str, Any]]:
    """Rows of a corpus ``records.jsonl`` (blank lines skipped)."""
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = loads(line)
        except (ValueError, RecursionError) as error:
            raise ParameterError(f"corpus line {number} is not JSON: {error}") from None
        if not isinstance(row, dict):
            raise ParameterError(f"corpus line {number} is not an object")
        rows.append(row)
    return rows


def snap(grid: Sequence[float], value: float) -> float | None:
    """The grid point within ``GRID_TOLERANCE`` of ``value``, if any."""
    position = bisect_left(grid, value - GRID_TOLERANCE)
    if position < len(grid) and abs(grid[position] - value) <= GRID_TOLERANCE:
        return grid[position]
    return None


# ------------------------------------------------------------------------ utilities


def _iou_terms(start: float, end: float, a: float, b: float) -> tuple[int, int]:
    """Exact IoU of [start, end] and [a, b] as (numerator, denominator) integers.

    Every float is a dyadic rational, so scaling to the largest denominator makes all
    four endpoints integers without rounding (the same value ``Fraction`` would give,
    without building one per comparison)."""
    s, ds = start.as_integer_ratio()
    e, de = end.as_integer_ratio()
    x, dx = a.as_integer_ratio()
    y, dy = b.as_integer_ratio()
    scale = max(ds, de, dx, dy)
    s, e, x, y = s * (scale // ds), e * (scale // de), x * (scale // dx), y * (scale // dy)
    intersection = (e if e < y else y) - (s if s > x else x)
    if intersection <= 0:
        return 0, 1
    union = (e - s) + (y - x) - intersection
    return (intersection, union) if union > 0 else (0, 1)


def _fraction(numerator: int, denominator: int) -> "Fraction":
    from fractions import Fraction  # imported on first use: the scorer itself needs none

    return Fraction(numerator, denominator)


def __getattr__(name: str) -> object:
    if name == "THRESHOLDS":
        return tuple(_fraction(n, d) for n, d in _THRESHOLD_TERMS)
    raise AttributeError(f"module 'scoring.moments' has no attribute {name!r}")


def iou(start: float, end: float, a: float, b: float) -> "Fraction":
    """Exact temporal IoU of [start, end] and [a, b] (a ``Fraction``)."""
    return _fraction(*_iou_terms(start, end, a, b))


def _best_terms(start: float, end: float, intervals: Sequence[Sequence[float]]) -> tuple[int, int]:
    best_n, best_d = 0, 1
    for a, b in intervals:
        n, d = _iou_terms(start, end, a, b)
        if n * best_d > best_n * d:
            best_n, best_d = n, d
    return best_n, best_d


def best_iou(start: float, end: float, intervals: Sequence[Sequence[float]]) -> "Fraction":
    """x: the best exact IoU of [start, end] with any acceptable interval (a ``Fraction``)."""
    return _fraction(*_best_terms(start, end, intervals))


def _hits(numerator: int, denominator: int) -> list[bool]:
    """x >= 0.5, 0.7, 0.9, exactly, for x = numerator / denominator."""
    return [numerator * d >= n * denominator for n, d in _THRESHOLD_TERMS]


def _utility_terms(numerator: int, denominator: int) -> float:
    # float(Fraction(n, d)) is n / d: int / int is correctly rounded
    hits = (2 * numerator >= denominator) + (10 * numerator >= 7 * denominator) + (10 * numerator >= 9 * denominator)
    return 0.7 * (hits / 3) + 0.3 * (numerator / denominator)


def utility(x: "Fraction | float") -> float:
    """u(x) = 0.7 * mean(x >= 0.5, x >= 0.7, x >= 0.9) + 0.3 * x (x a Fraction, float
    or int; the thresholds are compared exactly)."""
    return _utility_terms(*x.as_integer_ratio())


def _neighbours(grid: Sequence[float], value: float) -> list[float]:
    """The nearest grid point on either side of ``value`` (one when on the grid)."""
    points = []
    below = bisect_right(grid, value) - 1
    if below >= 0:
        points.append(grid[below])
    above = bisect_left(grid, value)
    if above < len(grid) and (not points or grid[above] != points[0]):
        points.append(grid[above])
    return points


def _best_grid_terms(grid: Sequence[float], intervals: Sequence[Sequence[float]]) -> tuple[Any, ...]:
    """(numerator, denominator, witness) of :func:`best_grid_interval`."""
    best_n, best_d, witness = 0, 1, None
    for a, b in intervals:
        for start in _neighbours(grid, a):
            for end in _neighbours(grid, b):
                if start < end:
                    n, d = _iou_terms(start, end, a, b)
                    if n * best_d > best_n * d:
                        best_n, best_d, witness = n, d, (start, end)
    return best_n, best_d, witness


def best_grid_interval(
    grid: Sequence[float], intervals: Sequence[Sequence[float]]
) -> "tuple[Fraction, tuple[float, float] | None]":
    """Closed-form best IoU over legal grid intervals (a ``Fraction``), with a witness.

    For one acceptable interval [a, b], IoU is monotone in each endpoint on each side
    of a (and of b), so the best start is a nearest grid point on either side of a and
    the best end one on either side of b: four candidates per acceptable interval.
    """
    best_n, best_d, witness = _best_grid_terms(grid, intervals)
    return _fraction(best_n, best_d), witness


def best_grid_iou(grid: Sequence[float], intervals: Sequence[Sequence[float]]) -> "Fraction":
    return best_grid_interval(grid, intervals)[0]


def brute_force_best_grid_iou(grid: Sequence[float], intervals: Sequence[Sequence[float]]) -> "Fraction":
    """The same maximum over every pair of grid points (for tests and the bench)."""
    best_n, best_d = 0, 1
    for i, start in enumerate(grid):
        for end in grid[i + 1 :]:
            n, d = _best_terms(start, end, intervals)
            if n * best_d > best_n * d:
                best_n, best_d = n, d
    return _fraction(best_n, best_d)


def reward_map(quality: float, *, a: float = DEFAULT_A, b: float = DEFAULT_B) -> float:
    """Piecewise-linear map sending raw quality 0, b, 1 to 0, a/100, 1."""
    if quality <= b:
        return (a / 100) * quality / b
    return a / 100 + (1 - a / 100) * (quality - b) / (1 - b)


# ---------------------------------------------------------------------- ground truth


@dataclass(frozen=True)
class Query:
    query_id: str
    video_id: str
    source: str
    intervals: tuple[tuple[float, float], ...]


def ground_truth_queries(ground_truth: object) -> list[Query]:
    queries = ground_truth.get("queries") if isinstance(ground_truth, Mapping) else ground_truth
    if not isinstance(queries, list):
        raise GroundTruthError("ground truth must be an object with a 'queries' list")
    result, seen = [], set()
    for number, item in enumerate(queries, start=1):
        if not isinstance(item, Mapping):
            raise GroundTruthError(f"ground-truth query {number} is not an object")
        query_id, video_id = item.get("query_id"), item.get("video_id")
        source = item.get("source", DEFAULT_SOURCE)
        if not (isinstance(query_id, str) and isinstance(video_id, str) and isinstance(source, str)):
            raise GroundTruthError(f"ground-truth query {number} needs string ids and source")
        if query_id in seen:
            raise GroundTruthError(f"ground-truth query id {query_id!r} repeats")
        seen.add(query_id)
        intervals = item.get("intervals")
        if not isinstance(intervals, list):
            raise GroundTruthError(f"ground-truth query {query_id!r} has no intervals list")
        pairs = []
        for interval in intervals:
            if (
                not isinstance(interval, (list, tuple))
                or len(interval) != 2
                or not (is_finite_number(interval[0]) and is_finite_number(interval[1]))
                or not interval[0] < interval[1]
            ):
                raise GroundTruthError(f"ground-truth query {query_id!r} has a bad interval")
            pairs.append((float(interval[0]), float(interval[1])))
        result.append(Query(query_id, video_id, source, tuple(pairs)))
    return result


def _check_params(a: object, b: object) -> None:
    if not is_finite_number(a) or not 0 <= a < 100:
        raise ParameterError(f"a must be a number in [0, 100), got {a!r}")
    if not is_finite_number(b) or not 0 < b < 1:
        raise ParameterError(f"b must be a number in (0, 1), got {b!r}")


# ------------------------------------------------------------------------ submission


@dataclass(frozen=True)
class Rows:
    by_query: dict[str, Any]  # query_id -> list of row objects
    invalid: int  # lines that are not an object with a known string query_id
    messages: tuple[Any, ...] = ()  # what was wrong with those lines, "line N ..." (first ten)


def submission_text(data: bytes) -> str:
    """The text of a JSONL submission: strict UTF-8, one leading byte-order mark
    ignored, universal newlines (CRLF and lone CR end a line, as in text mode)."""
    text = bytes(data).decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _line_problem(row: object, known: set[Any]) -> str | None:
    if not isinstance(row, dict):
        return f"is not a JSON object (a JSON {_json_type(row)})"
    query_id = row.get("query_id")
    if "query_id" not in row:
        return "has no query_id"
    if not isinstance(query_id, str):
        return f"has a non-string query_id {_short(query_id)}"
    if query_id not in known:
        return f"has unknown query_id {_short(query_id)}"
    return None


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_rows(data: bytes, known: set[Any]) -> Rows:
    """Group JSONL rows by query id. Raises ValueError when the file is unreadable.

    A line that is not JSON, not an object, or has no known string ``query_id`` is an
    invalid row; the first ten are named (``line N ...``) for the reason."""
    if len(data) > MAX_SOLUTION_BYTES:
        raise ValueError(f"submission exceeds {MAX_SOLUTION_BYTES} bytes")
    text = submission_text(data)
    by_query: dict[str, list[Any]] = {}
    invalid = 0
    messages: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = loads_like_verifier(line, DEPTH_LIMIT)
            problem = _line_problem(row, known)
        except (ValueError, RecursionError) as error:
            where = f" at column {error.colno}" if hasattr(error, "colno") else ""
            problem = f"is not JSON: {getattr(error, 'msg', error)}{where}"
        if problem is not None:
            invalid += 1
            if len(messages) < MAX_ROW_MESSAGES:
                messages.append(f"line {number} {problem}")
            continue
        by_query.setdefault(row["query_id"], []).append(row)
    return Rows(by_query, invalid, tuple(messages))


def _row_interval(row: dict[str, Any], grid: Sequence[float]) -> tuple[float, float] | str:
    """The snapped (start, end) of a legal row, or why it is not legal."""
    start, end = row.get("start"), row.get("end")
    if not (is_finite_number(start) and is_finite_number(end)):
        return "start and end must be finite numbers"
    if not start < end:
        return "start must be before end"
    snapped_start, snapped_end = snap(grid, start), snap(grid, end)
    if snapped_start is None or snapped_end is None:
        return "endpoint off the video's grid"
    if not snapped_start < snapped_end:
        return "empty interval on the grid"
    return snapped_start, snapped_end


# --------------------------------------------------------------------------- scoring


def _query_record(query: Query, grid: Sequence[float] | None, rows: list[Any] | None) -> dict[str, Any]:
    """The per-query record (key order as published); ``hits`` only for a scored row."""
    star_n, star_d, _ = _best_grid_terms(grid or [], query.intervals)
    u_star = _utility_terms(star_n, star_d)
    if u_star <= 0:
        status = "excluded_zero_normaliser"
    elif not rows:
        status = "missing"
    elif len(rows) > 1:
        status = "invalid: duplicated query id"
    else:
        interval = _row_interval(rows[0], grid or [])  # never None here: no grid, no normaliser
        if isinstance(interval, str):
            status = f"invalid: {interval}"
        else:
            x_n, x_d = _best_terms(interval[0], interval[1], query.intervals)
            return {
                "query_id": query.query_id,
                "source": query.source,
                "normaliser_iou": star_n / star_d,
                "normaliser": u_star,
                "status": "ok",
                "start": interval[0],
                "end": interval[1],
                "iou": x_n / x_d,
                "hits": _hits(x_n, x_d),
                "score": _utility_terms(x_n, x_d) / u_star,
            }
    record = {
        "query_id": query.query_id,
        "source": query.source,
        "normaliser_iou": star_n / star_d,
        "normaliser": u_star,
        "status": status,
    }
    if u_star > 0:
        record["iou"] = 0.0
        record["score"] = 0.0
    return record


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(records: Sequence[dict[str, Any]], *, a: float, b: float) -> dict[str, Any]:
    scored = [r for r in records if r["status"] != "excluded_zero_normaliser"]
    by_source: dict[str, list[float]] = {}
    for record in scored:
        by_source.setdefault(record["source"], []).append(record["score"])
    per_source = {source: _mean(scores) for source, scores in sorted(by_source.items())}
    quality = _mean(list(per_source.values()))
    hits = [r.get("hits", [False, False, False]) for r in scored]
    return {
        "reward": round(reward_map(quality, a=a, b=b), 6),
        "raw_quality": round(quality, 6),
        "per_source": {source: round(value, 6) for source, value in per_source.items()},
        "queries": len(records),
        "scored_queries": len(scored),
        "missing": sum(r["status"] == "missing" for r in records),
        "invalid": 0,
        "r1_at_0.5": round(_mean([h[0] for h in hits]), 6),
        "r1_at_0.7": round(_mean([h[1] for h in hits]), 6),
        "r1_at_0.9": round(_mean([h[2] for h in hits]), 6),
        "mean_iou": round(_mean([r["iou"] for r in scored]), 6),
        "excluded_zero_normaliser": len(records) - len(scored),
    }


def score(
    ground_truth: object,
    solution: bytes | BaseException,
    *,
    corpus: object = None,
    a: float = DEFAULT_A,
    b: float = DEFAULT_B,
) -> ScoreResult:
    """Score a JSONL submission of ``{"query_id", "start", "end"}`` rows."""
    _check_params(a, b)
    queries = ground_truth_queries(ground_truth)
    if corpus is None and isinstance(ground_truth, Mapping):
        corpus = ground_truth.get("videos")
    if corpus is None:
        raise ParameterError("moment-utility-v1 needs the corpus records (video grids)")
    grids = corpus_grids(corpus)
    unknown = sorted({q.video_id for q in queries} - set(grids))
    if unknown:
        raise ParameterError(f"corpus has no grid for video {unknown[0]!r}")
    reason = "ok"
    try:
        if isinstance(solution, BaseException):
            raise solution
        if not isinstance(solution, (bytes, bytearray, memoryview)):
            raise TypeError("solution must be bytes")
        rows = parse_rows(bytes(solution), {q.query_id for q in queries})
    except Exception as error:  # an unreadable file scores 0 with the reason
        rows = Rows({}, 0)
        reason = f"unreadable submission: {error}"
    records = [_query_record(query, grids.get(query.video_id), rows.by_query.get(query.query_id)) for query in queries]
    summary = summarise(records, a=a, b=b)
    summary["invalid"] = rows.invalid + sum(
        len(rows.by_query.get(r["query_id"], ())) if r["status"].startswith("invalid") else 0 for r in records
    )
    if reason == "ok" and (summary["missing"] or summary["invalid"]):
        reason = f"{summary['missing']} missing, {summary['invalid']} invalid rows"
        if rows.messages:
            reason += ": " + "; ".join(rows.messages)
    details = {
        **summary,
        "reason": reason,
        "excluded_query_ids": [r["query_id"] for r in records if r["status"] == "excluded_zero_normaliser"],
        "per_query": records,
    }
    for record in records:  # the hits were for the summary only (the records are ours)
        record.pop("hits", None)
    return with_details_encoded_on_read(
        lambda: dumps_indented(details, newline=True),
        reward=summary["reward"],
        reward_json=dumps_indented(summary, newline=True),
        reward_txt=f"{summary['reward']}\n".encode(),
        details=details,
        reason=reason,
        scorer_id="moment-utility-v1",
    )


def encode_rows(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """JSONL bytes of submission rows."""
    import json

    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
