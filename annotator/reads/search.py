"""Moment search over a video's search index (reads only; the index is built by
``annotator.actions.search``). docs/retrieval.md, "The search index in the app".

* :func:`capabilities`: which searches a packet supports now, and why not the others;
* :func:`search`: a text and/or an example interval in, the best grid-legal intervals
  out (top-k after temporal non-maximum suppression), ranked by the retrieval module's
  zero-shot scan statistic over the packet's grid.

Results depend on the video's features only (never on any ledger), so whoever may
search a packet learns nothing about anyone's labels.

The index's vectors are read once per process and kept (a few, least recently used
first out), with their resampling onto each grid, so a search costs one scan.
"""

from __future__ import annotations

import threading
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from pathlib import Path

import numpy as np
from django.conf import settings

from annotator.base.errors import Conflict, InvalidInput, WorkflowError
from annotator.base.families import adapter_for
from annotator.base.moment_sources import SOURCES as MOMENT_SOURCES
from annotator.models import Packet, VideoSearchIndex

MAX_K = 50
DEFAULT_K = 10
NMS_IOU = 0.3
# A "find similar" result that overlaps the example this much (IoU), or lies this much
# inside it (share of the result's length), is the example itself and is left out.
EXAMPLE_OVERLAP = 0.5
MAX_TEXT_LENGTH = 500
KEEP_LOADED = 4


class IndexNotReady(WorkflowError):
    """The video's search index cannot serve a search now (missing, building, failed, damaged)."""

    status = 409
    code = "index_not_ready"


# ---------------------------------------------------------------------- the encoder


class EncoderUnavailable(RuntimeError):
    pass


@lru_cache(maxsize=4)
def _load_encoder(spec: str):
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise EncoderUnavailable(f"FRAMELEDGER_SEARCH_ENCODER must be package.module:factory, got {spec!r}")
    try:
        factory = getattr(import_module(module_name), name)
        return factory()
    except Exception as error:  # an installed model that fails to load: said, not raised
        raise EncoderUnavailable(f"the encoder {spec} could not be loaded ({error})") from None


def search_encoder():
    """The configured local encoder, or ``None`` when none is configured. Raises
    :class:`EncoderUnavailable` when one is configured but cannot be loaded."""
    spec = settings.FRAMELEDGER_SEARCH_ENCODER
    return _load_encoder(spec) if spec else None


def encoder_label() -> str:
    return settings.FRAMELEDGER_SEARCH_ENCODER


# ---------------------------------------------------------------------- loading


@dataclass
class LoadedIndex:
    clips: np.ndarray  # n x D float32, unit rows
    clip_length: float
    texts: dict[str, np.ndarray]  # lower-cased description -> unit vector
    segments: dict = field(default_factory=dict)  # grid key -> (segments tensor, times tensor)


_loaded: OrderedDict[tuple, LoadedIndex] = OrderedDict()
_lock = threading.Lock()


def _media(name: str) -> Path:
    return Path(settings.MEDIA_ROOT) / name


def _damaged(detail: str) -> IndexNotReady:
    return IndexNotReady(
        f"the search index of this video is damaged ({detail}); a maintainer must rebuild it "
        "(POST /api/videos/<id>/search-index/)"
    )


def normalise_text(text: str) -> str:
    return " ".join(text.lower().split())


def load(row: VideoSearchIndex) -> LoadedIndex:
    """The index's vectors, from the process cache or the files. Raises
    :class:`IndexNotReady` when the index is not ready or its files are unusable."""
    from retrieval.features import l2_normalize

    if row.status != VideoSearchIndex.Status.READY or not row.vectors:
        raise IndexNotReady(not_ready_reason(row))
    path = _media(row.vectors)
    try:
        stat = path.stat()
    except OSError:
        raise _damaged("its vectors file is missing") from None
    text_path = _media(row.text_vectors) if row.text_vectors else None
    key = (row.pk, row.vectors, stat.st_mtime_ns, stat.st_size, row.text_vectors)
    with _lock:
        if key in _loaded:
            _loaded.move_to_end(key)
            return _loaded[key]
    try:
        clips = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise _damaged(f"its vectors file cannot be read: {error}") from None
    if clips.ndim != 2 or clips.shape[0] < 1 or (row.dim and clips.shape[1] != row.dim):
        raise _damaged(f"its vectors have shape {clips.shape}")
    clips = clips.astype(np.float32)
    if not np.all(np.isfinite(clips)):
        raise _damaged("its vectors hold NaN or infinity")
    texts: dict[str, np.ndarray] = {}
    if text_path is not None:
        try:
            with np.load(text_path, allow_pickle=False) as data:
                names = [str(t) for t in data["texts"]]
                embeddings = np.asarray(data["embeddings"], dtype=np.float32)
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise _damaged(f"its text features cannot be read: {error}") from None
        if embeddings.shape != (len(names), clips.shape[1]) or not np.all(np.isfinite(embeddings)):
            raise _damaged("its text features do not match its vectors")
        texts = {normalise_text(t): v for t, v in zip(names, l2_normalize(embeddings), strict=True)}
    loaded = LoadedIndex(l2_normalize(clips), float(row.clip_length or 1.0), texts)
    with _lock:
        _loaded[key] = loaded
        while len(_loaded) > KEEP_LOADED:
            _loaded.popitem(last=False)
    return loaded


def not_ready_reason(row: VideoSearchIndex | None) -> str:
    if row is None:
        return "this video has no search index yet; a maintainer can build it"
    if row.status in {VideoSearchIndex.Status.PENDING, VideoSearchIndex.Status.BUILDING}:
        return f"the search index of this video is being built ({row.status}); try again in a moment"
    if row.status == VideoSearchIndex.Status.UNAVAILABLE:
        return f"this video has nothing to search with: {row.error}"
    if row.status == VideoSearchIndex.Status.FAILED:
        return f"building the search index failed ({row.error}); a maintainer can rebuild it"
    return "the search index is not ready"


# ---------------------------------------------------------------------- capabilities


def is_moment_packet(packet: Packet) -> bool:
    return adapter_for(packet.task_kind.schema["family"]).moment_search


def packet_grid(packet: Packet):
    from retrieval.grid import Grid, GridError

    corpus = adapter_for(packet.task_kind.schema["family"]).task_parameters(packet)["corpus"][0]
    try:
        return Grid.from_spec(corpus["grid"], float(packet.video.duration))
    except GridError as error:
        raise Conflict(f"the packet's grid cannot be searched ({error})") from None


def _text_encoder(row: VideoSearchIndex):
    """The configured encoder when it can embed text in the index's space, else None."""
    if row.source not in {VideoSearchIndex.Source.ENCODER, VideoSearchIndex.Source.UPLOADED}:
        return None
    try:
        encoder = search_encoder()
    except EncoderUnavailable:
        return None
    if encoder is None or not callable(getattr(encoder, "encode_text", None)):
        return None
    dim = getattr(encoder, "dim", None)
    return encoder if dim in (None, row.dim) else None


# What a maintainer can upload for a video so that its index can be built (the layouts
# ``actions.search.do_upload_search_features`` accepts; docs/retrieval.md).
FEATURE_LAYOUTS = (
    "CLIP frame features: an .npz with the key features, or an .npy, holding L × D floats "
    "(one row per clip, moment_detr layout) with the clip length in seconds; optionally text features "
    "in the same space: an .npz with texts and embeddings (N × D)"
)


def has_media(packet: Packet) -> bool:
    """Whether the packet's video has media files (an imported annotation-only video has none)."""
    video = packet.video
    return any(field and field.name for field in (video.original, video.proxy, video.remux))


def is_annotation_only(packet: Packet) -> bool:
    """Whether the packet's video has no media by design: the annotation-only row a moment
    import made (``original_name`` ``<source>:<video id>``, no files). A video row without
    files otherwise (one whose ingest is not done, or broke) is not: its player tries to
    load it and says why it cannot."""
    source, colon, _ = (packet.video.original_name or "").partition(":")
    return bool(colon) and source in MOMENT_SOURCES and not has_media(packet)


def remedy(packet: Packet, row: VideoSearchIndex | None) -> str:
    """The way forward when nothing can be searched yet ("" while something can or a
    build is under way)."""
    building = {VideoSearchIndex.Status.READY, VideoSearchIndex.Status.PENDING, VideoSearchIndex.Status.BUILDING}
    if row is not None and row.status in building:
        return ""
    features = (
        f"A maintainer can upload CLIP features for this video on the packet page ({FEATURE_LAYOUTS}); "
        "the index is then built and search works."
    )
    if has_media(packet):
        return f"{features} Or rebuild the index there."
    return f"This packet's video is annotation-only: no video file, no features. {features} {player_remedy(packet)}"


def player_remedy(packet: Packet) -> str:
    """What would give an annotation-only packet's player a video (the search panel's
    ``remedy`` and the annotator's workspace say it in these words)."""
    name = packet.video.original_name or packet.video.title
    return (
        f"The player needs the video file: ingest it as {name} before its labels are imported "
        "(the import then uses it)."
    )


def capabilities(packet: Packet, row: VideoSearchIndex | None) -> dict:
    """What the search box of this packet can do, in words the page shows as they are;
    ``remedy`` says what would make it work when nothing can run."""
    body = {"index": index_status(row), "text": False, "example": False, "texts": [], "reason": "", "remedy": ""}
    if not is_moment_packet(packet):
        body["reason"] = "Search finds intervals of moment-query packets; this task kind has none."
        return body
    if row is None or row.status != VideoSearchIndex.Status.READY:
        body["reason"] = not_ready_reason(row).capitalize() + "."
        body["remedy"] = remedy(packet, row)
        return body
    try:
        loaded = load(row)
    except IndexNotReady as error:
        body["reason"] = error.message[0].upper() + error.message[1:] + "."
        return body
    body["example"] = True
    body["grid"] = packet_grid(packet).to_spec()
    if row.source == VideoSearchIndex.Source.DESCRIPTOR:
        body["reason"] = (
            "Text search needs a text encoder; this packet has only the embedded visual descriptor: search by example "
            "(select an interval, then Find similar)."
        )
    elif _text_encoder(row) is not None:
        body["text"] = True
        body["reason"] = f"Text search and search by example ({row.get_source_display()} features)."
    elif loaded.texts:
        body["text"] = True
        body["texts"] = sorted(loaded.texts)[:500]
        body["reason"] = (
            f"Text search knows the {len(loaded.texts)} description(s) uploaded with the features (no text encoder "
            "is installed for other words); search by example works for any interval."
        )
    else:
        body["reason"] = (
            "Text search needs a text encoder or text features uploaded with the video's features; "
            "search by example works."
        )
    return body


def index_status(row: VideoSearchIndex | None) -> dict:
    if row is None:
        return {"status": "missing"}
    return {
        "status": row.status,
        "source": row.source,
        "clip_length": row.clip_length,
        "clips": row.clip_count,
        "dim": row.dim,
        "encoder": row.encoder,
        "text_features": bool(row.text_vectors),
        "built_at": row.built_at.isoformat() if row.built_at else None,
        "build_seconds": row.build_seconds,
        "error": row.error,
    }


# ---------------------------------------------------------------------- searching


def _segments(loaded: LoadedIndex, grid, duration: float):
    import torch

    from retrieval.features import frame_edges, resample_to_segments

    key = (grid.step, grid.times.size, float(grid.times[-1]), duration)
    cached = loaded.segments.get(key)
    if cached is None:
        edges = frame_edges(loaded.clips.shape[0], duration, loaded.clip_length)
        segments = resample_to_segments(loaded.clips, edges, grid.times)
        cached = (torch.from_numpy(segments), torch.from_numpy(np.array(grid.times, dtype=np.float64)))
        with _lock:
            loaded.segments[key] = cached
    return cached


def _text_vector(row: VideoSearchIndex, loaded: LoadedIndex, text: str) -> np.ndarray:
    from retrieval.features import l2_normalize

    if row.source == VideoSearchIndex.Source.DESCRIPTOR:
        raise InvalidInput(
            "text search needs a text encoder; this video has only the embedded visual descriptor: search by example",
            field="text",
        )
    found = loaded.texts.get(normalise_text(text))
    if found is not None:
        return found
    encoder = _text_encoder(row)
    if encoder is None:
        raise InvalidInput(
            "no text features for this description and no text encoder is installed: pick one of the listed "
            "descriptions, or search by example",
            field="text",
        )
    vector = np.asarray(encoder.encode_text([text]), dtype=np.float32).reshape(-1)
    if vector.shape != (loaded.clips.shape[1],) or not np.all(np.isfinite(vector)):
        raise IndexNotReady("the text encoder's vectors do not match this index; a maintainer must rebuild it")
    return l2_normalize(vector)


def example_vector(segments, grid, start: float, end: float) -> tuple[np.ndarray, float, float]:
    from retrieval.features import l2_normalize

    a, b = grid.nearest_index(start), grid.nearest_index(end)
    if b <= a:
        b = min(a + 1, grid.n_points - 1)
        a = b - 1
    durations = np.diff(grid.times)[a:b]
    seg = segments[a:b].numpy()
    vector = (seg * durations[:, None]).sum(axis=0)
    return l2_normalize(vector), float(grid.times[a]), float(grid.times[b])


def _frames(seconds: float, packet: Packet) -> int:
    video = packet.video
    rate = (video.frame_rate_num / video.frame_rate_den) if video.frame_rate_num else 30.0
    last = max(0, (video.frame_count or 1) - 1)
    return int(min(last, max(0, round(seconds * rate))))


def seconds_of_frame(frame: int, packet: Packet) -> float:
    video = packet.video
    rate = (video.frame_rate_num / video.frame_rate_den) if video.frame_rate_num else 30.0
    return frame / rate


def _same_as_example(span: tuple[float, float], example: tuple[float, float]) -> bool:
    from retrieval.grid import iou

    inside = max(0.0, min(span[1], example[1]) - max(span[0], example[0])) / (span[1] - span[0])
    return iou(span, example) >= EXAMPLE_OVERLAP or inside >= EXAMPLE_OVERLAP


def rank_intervals(segments, times, grid, query: np.ndarray, *, k: int, example_span=None) -> tuple[list, int]:
    """Pure ranking: the best ``k`` grid intervals ``(start_s, end_s, score)`` for a unit
    ``query`` over the grid's segment vectors (zero-shot scan statistic of the cosine,
    the best 64 row champions thinned by temporal NMS), leaving out what is the example
    itself. Returns them with the number of intervals scored."""
    import torch

    from retrieval.pipeline import rank_zero_shot
    from retrieval.scan import DEFAULT_GAMMA, MAX_FINE_CANDIDATES

    ranking = rank_zero_shot(
        segments, torch.from_numpy(np.asarray(query, dtype=np.float32)), times, grid.times, gamma=DEFAULT_GAMMA,
        step=grid.step, k=MAX_FINE_CANDIDATES, nms_iou=NMS_IOU,
    )  # fmt: skip
    cands = ranking.candidates
    found = []
    for s, e, score in zip(cands.starts, cands.ends, ranking.fine, strict=True):
        start, end = grid.interval(int(s), int(e))
        if example_span is not None and _same_as_example((start, end), example_span):
            continue
        found.append((start, end, float(score)))
        if len(found) == k:
            break
    return found, cands.n_scored


def search(packet: Packet, row: VideoSearchIndex | None, *, text: str = "", example=None, k: int = DEFAULT_K) -> dict:
    """The best ``k`` intervals for a text, an example ``(start_s, end_s)``, or both
    (their vectors added, then normalised). Raises ``InvalidInput`` / :class:`IndexNotReady`."""
    from retrieval.features import l2_normalize

    if not is_moment_packet(packet):
        raise InvalidInput("search finds intervals of moment-query packets; this task kind has none")
    if row is None:
        raise IndexNotReady(not_ready_reason(None))
    loaded = load(row)
    grid = packet_grid(packet)
    segments, times = _segments(loaded, grid, float(packet.video.duration))
    parts, used = [], {}
    if text:
        parts.append(_text_vector(row, loaded, text))
        used["text"] = text
    example_span = None
    if example is not None:
        vector, a, b = example_vector(segments, grid, *example)
        parts.append(vector)
        example_span = (a, b)
        used["example"] = [a, b]
    if not parts:
        raise InvalidInput("give a text, an example interval, or both")
    found, scored = rank_intervals(segments, times, grid, l2_normalize(np.sum(parts, axis=0)), k=k,
                                   example_span=example_span)  # fmt: skip
    results = [
        {"rank": rank, "start": start, "end": end, "start_frame": _frames(start, packet),
         "end_frame": _frames(end, packet), "score": round(score, 6)}
        for rank, (start, end, score) in enumerate(found, start=1)
    ]  # fmt: skip
    return {"query": used, "results": results, "grid": grid.to_spec(), "source": row.source, "scored": scored}
