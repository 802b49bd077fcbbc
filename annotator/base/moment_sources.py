"""Published moment annotations (QVHighlights, Charades-STA and its re-annotation CSVs)
read into one record per video: its duration, grid and queries with their acceptable
intervals. Pure: bytes in, records out, a clear error naming the line for bad input.

- QVHighlights (``highlight_{train,val}_release.jsonl``): one row per query with ``qid``,
  ``query``, ``vid``, ``duration`` and ``relevant_windows`` in seconds (several windows are
  all acceptable). Grid: 2 s, the clip length of the public features.
- Charades-STA (the Lighthouse ``charades_{train,test}_release.jsonl``): the same row shape,
  one window. Grid: 1 s. The re-annotation CSVs (``HITId, video_id, description, start,
  end``; start and end in PERCENT of the duration) add each matching query's five extra
  intervals, matched on the video id and the lower-cased description.

Query ids are ``qv<qid>`` and ``ch<qid>``. Windows are kept in the file's order (the
original label first, re-annotations after), repeats removed; an end past the video's
duration is clipped to it (counted in ``clipped``), a window that is then empty is
dropped (counted in ``dropped``); a query left with no window is an error.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

SOURCES = {"qvhighlights": {"prefix": "qv", "grid_step": 2.0}, "charades-sta": {"prefix": "ch", "grid_step": 1.0}}
# The largest annotation file (the .jsonl, and each re-annotation CSV) any import takes:
# the page, ``POST /api/moment-imports/`` and ``manage.py import_moments`` alike. A whole
# release fits with room to spare (QVHighlights train: 3.96 MB, 7,218 rows; the Charades-STA
# Lighthouse test release: 0.49 MB).
MAX_FILE_BYTES = 64 * 1024**2


# Rows of one file (the .jsonl's lines, each CSV's), counted before any is parsed: parsing
# costs several times a file's bytes in memory, and a release has far fewer (QVHighlights
# train: 7,218). Re-annotation CSVs per import: Charades-STA publishes three.
MAX_ROWS = 50_000
# One row's fields: the video id names a Video row (``<source>:<id>`` in a 300-character
# column), the query is a sentence; durations are seconds of a video (ten days at most).
MAX_VIDEO_ID_CHARS = 200
MAX_QUERY_CHARS = 2000
MAX_QID_CHARS = 40
MAX_DURATION = 10 * 24 * 3600.0
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_REANNOTATION_FILES = 8


def size_refusal(size: int) -> str | None:
    """Why a file of ``size`` bytes is refused, or None."""
    if size > MAX_FILE_BYTES:
        return f"annotation files are limited to {MAX_FILE_BYTES // 1024**2} MiB ({MAX_FILE_BYTES} bytes)"
    return None


def count_rows(chunks) -> int:
    """Lines in a file given as byte chunks (a last line without a newline counts)."""
    rows, last = 0, b"\n"
    for chunk in chunks:
        if chunk:
            rows, last = rows + chunk.count(b"\n"), chunk[-1:]
    return rows + (last != b"\n")


def rows_refusal(rows: int) -> str | None:
    """Why a file of ``rows`` lines is refused, or None."""
    if rows > MAX_ROWS:
        return f"annotation files are limited to {MAX_ROWS} rows; this one has {rows}"
    return None


def files_refusal(reannotation_files: int) -> str | None:
    if reannotation_files > MAX_REANNOTATION_FILES:
        return f"at most {MAX_REANNOTATION_FILES} re-annotation files per import; {reannotation_files} were sent"
    return None


class SourceError(ValueError):
    """The file is not what the source's format says; the message names the line."""


@dataclass
class SourceVideo:
    source: str
    video_id: str
    duration: float
    grid_step: float
    queries: list[dict] = field(default_factory=list)  # {"query_id", "query", "intervals"}
    clipped: int = 0
    dropped: int = 0

    def sha256(self) -> str:
        body = {"source": self.source, "video_id": self.video_id, "duration": self.duration, "queries": self.queries}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SourceError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _row(line: str, number: int, name: str) -> dict:
    try:
        row = json.loads(line)
    except ValueError as error:
        raise SourceError(f"{name} line {number}: not JSON ({error})") from None
    if not isinstance(row, dict):
        raise SourceError(f"{name} line {number}: not an object")
    for key in ("qid", "query", "vid", "duration", "relevant_windows"):
        if key not in row:
            raise SourceError(f"{name} line {number}: no {key!r}")
    if not isinstance(row["query"], str) or not isinstance(row["vid"], str) or not row["vid"]:
        raise SourceError(f"{name} line {number}: 'query' and 'vid' must be text")
    for key, limit in (("vid", MAX_VIDEO_ID_CHARS), ("query", MAX_QUERY_CHARS)):
        if len(row[key]) > limit:
            raise SourceError(f"{name} line {number}: {key!r} is at most {limit} characters")
        if CONTROL.search(row[key]):
            raise SourceError(f"{name} line {number}: {key!r} must not contain control characters (NUL included)")
    if not isinstance(row["qid"], (int, str)) or isinstance(row["qid"], bool) or len(str(row["qid"])) > MAX_QID_CHARS:
        raise SourceError(f"{name} line {number}: 'qid' is a number or text of at most {MAX_QID_CHARS} characters")
    if CONTROL.search(str(row["qid"])):
        raise SourceError(f"{name} line {number}: 'qid' must not contain control characters (NUL included)")
    if not isinstance(row["relevant_windows"], list) or not row["relevant_windows"]:
        raise SourceError(f"{name} line {number}: 'relevant_windows' must be a non-empty list")
    return row


def _windows(pairs, duration: float, where: str, video: SourceVideo) -> list[list[float]]:
    kept: list[list[float]] = []
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise SourceError(f"{where}: window {pair!r} is not a [start, end] pair")
        start, end = _number(pair[0], where), _number(pair[1], where)
        if start < 0 or end < start:
            raise SourceError(f"{where}: window [{start}, {end}] is reversed or negative")
        if end > duration:
            end, video.clipped = duration, video.clipped + 1
        if end <= start:
            video.dropped += 1
            continue
        window = [round(start, 6), round(end, 6)]
        if window not in kept:
            kept.append(window)
    return kept


def read_jsonl(
    source: str, data: bytes, *, name: str = "annotations", reannotated: Sequence[bytes] = ()
) -> list[SourceVideo]:
    """Videos in order of first appearance, each with its queries."""
    if source not in SOURCES:
        raise SourceError(f"unknown source {source!r}; one of {', '.join(SOURCES)}")
    extra = _reannotations(reannotated) if source == "charades-sta" else {}
    if reannotated and source != "charades-sta":
        raise SourceError("re-annotation CSVs belong to Charades-STA")
    refusal = rows_refusal(count_rows([data]))
    if refusal:
        raise SourceError(refusal)
    videos: dict[str, SourceVideo] = {}
    seen: set[str] = set()
    for number, raw in enumerate(io.BytesIO(data), start=1):  # one line at a time, never all at once
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SourceError(f"{name} is not UTF-8 text (line {number})") from None
        if not line.strip():
            continue
        row = _row(line, number, name)
        where = f"{name} line {number}"
        duration = _number(row["duration"], where)
        if not 0 < duration <= MAX_DURATION:
            raise SourceError(f"{where}: duration must be positive and at most {MAX_DURATION:g} seconds")
        video = videos.get(row["vid"])
        if video is None:
            video = videos[row["vid"]] = SourceVideo(source, row["vid"], duration, SOURCES[source]["grid_step"])
        elif abs(video.duration - duration) > 1e-6:
            raise SourceError(f"{where}: video {row['vid']} has duration {duration}, earlier {video.duration}")
        query_id = f"{SOURCES[source]['prefix']}{row['qid']}"
        if query_id in seen:
            raise SourceError(f"{where}: query id {query_id} repeats")
        seen.add(query_id)
        pairs = list(row["relevant_windows"])
        for start, end in extra.get((row["vid"], row["query"].strip().lower()), []):
            pairs.append([start * duration / 100.0, end * duration / 100.0])
        windows = _windows(pairs, duration, where, video)
        if not windows:
            raise SourceError(f"{where}: query {query_id} has no window inside the video")
        video.queries.append({"query_id": query_id, "query": row["query"].strip(), "intervals": windows})
    if not videos:
        raise SourceError(f"{name} holds no annotation rows")
    return list(videos.values())


def _reannotations(files: Sequence[bytes]) -> dict[tuple[str, str], list[tuple[float, float]]]:
    extra: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for index, data in enumerate(files, start=1):
        refusal = rows_refusal(count_rows([data]))
        if refusal:
            raise SourceError(f"re-annotation file {index}: {refusal}")
        try:
            reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig")))
        except UnicodeDecodeError:
            raise SourceError(f"re-annotation file {index} is not UTF-8 text") from None
        missing = {"video_id", "description", "start", "end"} - set(reader.fieldnames or [])
        if missing:
            raise SourceError(f"re-annotation file {index} has no column {sorted(missing)[0]!r}")
        for number, row in enumerate(reader, start=2):
            try:
                start, end = float(row["start"]), float(row["end"])
            except (TypeError, ValueError):
                raise SourceError(f"re-annotation file {index} line {number}: start/end are not numbers") from None
            if not (0 <= start <= 100 and 0 <= end <= 100):
                raise SourceError(f"re-annotation file {index} line {number}: start/end are percent (0-100)")
            key = (row["video_id"].removesuffix(".mp4"), row["description"].strip().lower())
            extra[key].append((start, end))
    return extra


def select(videos: Sequence[SourceVideo], *, limit: int | None = None, video_ids: Sequence[str] = ()) -> list:
    """The named videos (an unknown name is an error), else the first ``limit``."""
    if video_ids:
        by_id = {v.video_id: v for v in videos}
        unknown = [v for v in video_ids if v not in by_id]
        if unknown:
            raise SourceError(f"no video {unknown[0]!r} in the file")
        return [by_id[v] for v in video_ids]
    if limit is not None and limit < 1:
        raise SourceError("the limit must be at least 1")
    return list(videos[:limit] if limit else videos)
