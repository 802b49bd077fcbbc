"""Building a video's moment-search index (``VideoSearchIndex``), and the requests that
queue a build. docs/retrieval.md, "The search index in the app".

Feature sources, the first available wins:

1. uploaded CLIP features: the file a maintainer uploaded for the video
   (:func:`do_upload_search_features`), else a moment packet's ``parameters.features``
   (a path under the media root, with ``parameters.clip_length``; moment_detr layout,
   ``.npz`` key ``features`` or ``.npy``); text features in the same space optional;
2. the locally installed encoder named by ``FRAMELEDGER_SEARCH_ENCODER`` (weights
   already on disk), over frames sampled from the video's proxy (or remux);
3. the embedded low-level descriptor (``retrieval.descriptor``) over the same frames,
   which supports search by example only.

A video with none of these (annotation-only rows of imported moment labels without
features) gets the status ``unavailable`` with the reason. A build that fails records
its error; the previous files are removed only once the new ones are in place.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import BinaryIO

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.base.arrays import (
    FEATURES,
    SEARCH_FEATURES,
    Member,
    finite_floats,
    inspect_npy,
    inspect_npz,
    non_empty_texts,
)
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.families import adapter_for, family_names
from annotator.base.grading.uploads import UploadRefused
from annotator.base.queue import BUILD_SEARCH_INDEX, RECOMPUTE_CALIBRATION, enqueue_on_commit
from annotator.models import GroundTruthVersion, Packet, Video, VideoSearchIndex
from annotator.models.audit_log import record

INDEX_DIR = "search-index"
DESCRIPTOR_FRAME_SIZE = (64, 36)
FRAMES_PER_CLIP = 2
ENCODER_BATCH = 64
MAX_FEATURE_BYTES = 512 * 1024**2


def moment_packets(video: Video):
    """The video's packets whose family asks for intervals (``moment_search``)."""
    families = [name for name in family_names() if adapter_for(name).moment_search]
    return Packet.objects.filter(video=video, task_kind__schema__family__in=families)


def request_search_index(video: Video, *, force: bool = False) -> VideoSearchIndex | None:
    """Queue a build (after commit) when the video is ready and a moment packet uses it
    (or ``force``). A build already pending is not queued twice."""
    if video.status != Video.Status.READY or not (force or moment_packets(video).exists()):
        return None
    row, created = VideoSearchIndex.objects.get_or_create(video=video)
    if not created and row.status == VideoSearchIndex.Status.PENDING and not force:
        return row
    VideoSearchIndex.objects.filter(pk=row.pk).update(status=VideoSearchIndex.Status.PENDING, updated_at=timezone.now())
    row.status = VideoSearchIndex.Status.PENDING
    enqueue_on_commit(BUILD_SEARCH_INDEX, video.pk)
    return row


@transaction.atomic
def do_rebuild_search_index(video: Video, *, actor) -> VideoSearchIndex:
    """A maintainer's rebuild: queued whatever the video's packets, audited."""
    if video.status != Video.Status.READY:
        raise Conflict(f"video {video.pk} is not ready (status {video.status})")
    row = request_search_index(video, force=True)
    record(actor, "search_index.rebuild", video, details={"video": video.pk})
    return row


# ---------------------------------------------------------------------- uploads


def _write_atomic(folder: Path, name: str, data: bytes | BinaryIO) -> Path:
    """Write bytes, or a file's contents copied in chunks (never held whole), under ``name``."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=folder, prefix=".upload-")
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                data.seek(0)
                shutil.copyfileobj(data, handle, 1024 * 1024)
        os.replace(temp, folder / name)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return folder / name


def _relative(path: Path) -> str:
    return str(path.relative_to(Path(settings.MEDIA_ROOT)))


def validate_feature_upload(data: bytes | BinaryIO, name: str) -> tuple[int, int]:
    """The shape ``(L, D)`` of uploaded frame features (``.npz`` key ``features``, or
    ``.npy``), judged by ``annotator.base.arrays`` without loading them: declared shape and
    dtype before any data, the data streamed and counted (finite floats), the zip caps of
    every archive upload; else ``InvalidInput`` saying what is wrong."""
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    try:
        if name.lower().endswith(".npy"):
            declared = inspect_npy(stream, name, SEARCH_FEATURES, FEATURES)
        else:
            declared = inspect_npz(stream, name, SEARCH_FEATURES, {"features": FEATURES})["features"]
    except UploadRefused as error:
        raise InvalidInput(str(error), field="features") from None
    shape = declared.shape if len(declared.shape) == 2 else (1, *declared.shape)
    if min(shape) < 1:
        raise InvalidInput(f"{name}: expected an L x D array, got shape {declared.shape}", field="features")
    return shape[0], shape[1]


def validate_text_upload(data: bytes | BinaryIO, dim: int) -> int:
    """Text features: an ``.npz`` with ``texts`` (strings) and ``embeddings`` (N x D), judged
    as the frame features are (never loaded); the number of texts."""
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    members = {"texts": Member("U", (1,), non_empty_texts), "embeddings": Member("f", (2,), finite_floats)}
    try:
        found = inspect_npz(stream, "text features", SEARCH_FEATURES, members)
    except UploadRefused as error:
        raise InvalidInput(f"text features: an .npz with 'texts' and 'embeddings' is needed ({error})",
                           field="text_features") from None  # fmt: skip
    [count] = found["texts"].shape
    if found["embeddings"].shape != (count, dim):
        raise InvalidInput(
            f"text features: embeddings must be {count} x {dim} floats (the features' dimension), "
            f"got {found['embeddings'].shape}",
            field="text_features",
        )
    return count


def _size(data: bytes | BinaryIO) -> int:
    if isinstance(data, bytes):
        return len(data)
    data.seek(0, os.SEEK_END)
    return data.tell()


def _rewound(data):
    if data is not None and not isinstance(data, bytes):
        data.seek(0)
    return data


@transaction.atomic
def do_upload_search_features(
    video: Video,
    *,
    actor,
    features: bytes | BinaryIO,
    name: str,
    clip_length: float,
    text_features: bytes | BinaryIO | None = None,
) -> VideoSearchIndex:
    """Store CLIP frame features (and optional text features) for a video and queue its
    index build. ``InvalidInput`` for a file that is not an ``L x D`` float array. The files
    may be bytes or files (an upload where it lies): they are judged and copied in chunks."""
    if not (isinstance(clip_length, (int, float)) and 0 < clip_length <= 60):
        raise InvalidInput("clip_length must be seconds per feature frame, 0 < clip_length <= 60", field="clip_length")
    if _size(features) > MAX_FEATURE_BYTES:
        raise InvalidInput(f"features are limited to {MAX_FEATURE_BYTES} bytes", field="features")
    clips, dim = validate_feature_upload(_rewound(features), name)
    count = validate_text_upload(_rewound(text_features), dim) if text_features else 0
    folder = Path(settings.MEDIA_ROOT) / INDEX_DIR / str(video.pk)
    token = uuid.uuid4().hex[:12]
    suffix = ".npy" if name.lower().endswith(".npy") else ".npz"
    stored = _write_atomic(folder, f"upload-{token}{suffix}", features)
    text_stored = _write_atomic(folder, f"upload-text-{token}.npz", text_features) if text_features else None
    row, _ = VideoSearchIndex.objects.select_for_update().get_or_create(video=video)
    old = [row.features_upload, row.text_features_upload]
    row.features_upload = _relative(stored)
    row.text_features_upload = _relative(text_stored) if text_stored else ""
    row.upload_clip_length = float(clip_length)
    row.save()
    transaction.on_commit(lambda: _remove([o for o in old if o]))
    record(
        actor, "search_index.upload", video,
        details={"clips": clips, "dim": dim, "clip_length": clip_length, "texts": count},
    )  # fmt: skip
    request_search_index(video, force=True)
    # The zero-shot calibration anchor of the video's moment versions needs features: computed
    # again once these are stored (annotator.reads.moment_corpus reads the upload).
    versions = list(GroundTruthVersion.objects.filter(packet__in=moment_packets(video)).values_list("pk", flat=True))
    if versions:
        enqueue_on_commit(RECOMPUTE_CALIBRATION, sorted(versions))
    return row


def _remove(names) -> None:
    root = Path(settings.MEDIA_ROOT)
    for name in names:
        if name:
            (root / name).unlink(missing_ok=True)


# ---------------------------------------------------------------------- building


class NoSource(Exception):
    pass


def _packet_features(video: Video) -> tuple[Path, float | None, Path | None] | None:
    for packet in moment_packets(video).order_by("pk"):
        name = packet.parameters.get("features")
        if name:
            path = Path(settings.MEDIA_ROOT) / name
            text = packet.parameters.get("text_features")
            return path, packet.parameters.get("clip_length"), (Path(settings.MEDIA_ROOT) / text) if text else None
    return None


def _media_path(video: Video) -> Path | None:
    for field in (video.proxy, video.remux):
        if field and field.name:
            path = Path(settings.MEDIA_ROOT) / field.name
            if path.is_file():
                return path
    return None


def _from_uploaded(row: VideoSearchIndex) -> tuple[np.ndarray, float, Path | None, str] | None:
    from retrieval.features import FeatureError, load_feature_array

    if row.features_upload:
        path, clip, text = Path(settings.MEDIA_ROOT) / row.features_upload, row.upload_clip_length, None
        if row.text_features_upload:
            text = Path(settings.MEDIA_ROOT) / row.text_features_upload
        label = "uploaded"
    else:
        found = _packet_features(row.video)
        if found is None:
            return None
        path, clip, text = found
        label = f"packet parameters ({path.name})"
    try:
        with open(path, "rb") as handle:  # judged before it is loaded: the caps of the upload
            validate_feature_upload(handle, path.name)
        clips = load_feature_array(path)
    except InvalidInput as error:
        raise ValueError(f"uploaded features: {error.message}") from None
    except FeatureError as error:
        raise ValueError(f"uploaded features: {error}") from None
    if not clip:
        clip = float(row.video.duration) / clips.shape[0]
    return clips, float(clip), text, label


def _from_frames(video: Video, encoder) -> tuple[np.ndarray, float]:
    from annotator.base.media.sampling import sample_frames
    from retrieval.descriptor import DIM, fill_gaps, frame_descriptor

    path = _media_path(video)
    if path is None:
        raise NoSource("no features were uploaded and the video has no media to compute features from")
    clip = float(settings.FRAMELEDGER_SEARCH_CLIP_SECONDS)
    n_clips = max(1, int(np.ceil(float(video.duration) / clip - 1e-9)))
    size = tuple(getattr(encoder, "frame_size", (224, 224))) if encoder is not None else DESCRIPTOR_FRAME_SIZE
    sums = None
    counts = np.zeros(n_clips, dtype=np.int64)
    batch: list[tuple[int, np.ndarray]] = []

    def flush() -> None:
        nonlocal sums
        vectors = np.asarray(encoder.encode_frames(np.stack([f for _, f in batch])), dtype=np.float64)
        if sums is None:
            sums = np.zeros((n_clips, vectors.shape[1]))
        for (index, _), vector in zip(batch, vectors, strict=True):
            sums[index] += vector
        batch.clear()

    if encoder is None:
        sums = np.zeros((n_clips, DIM))
    for t, frame in sample_frames(path, clip / FRAMES_PER_CLIP, size):
        index = min(n_clips - 1, int(t // clip))
        counts[index] += 1
        if encoder is None:
            sums[index] += frame_descriptor(frame)
        else:
            batch.append((index, frame))
            if len(batch) == ENCODER_BATCH:
                flush()
    if encoder is not None and batch:
        flush()
    if sums is None or not counts.any():
        raise ValueError("no frame could be decoded from the video")
    return fill_gaps(sums, counts), clip


def _save_text(folder: Path, token: str, source: Path, dim: int) -> str:
    with open(source, "rb") as handle:
        validate_text_upload(handle, dim)
    target = folder / f"text-{token}.npz"
    shutil.copyfile(source, target)
    return _relative(target)


def do_build_search_index(video_id: int) -> VideoSearchIndex | None:
    """Build (or rebuild) the video's index from the first source available."""
    from annotator.reads.search import EncoderUnavailable, search_encoder
    from retrieval.descriptor import DESCRIPTOR_ID

    video = Video.objects.filter(pk=video_id).first()
    if video is None:
        return None
    row, _ = VideoSearchIndex.objects.get_or_create(video=video)
    VideoSearchIndex.objects.filter(pk=row.pk).update(status=VideoSearchIndex.Status.BUILDING, error="")
    started = time.monotonic()
    folder = Path(settings.MEDIA_ROOT) / INDEX_DIR / str(video.pk)
    token = uuid.uuid4().hex[:12]
    written: list[str] = []
    try:
        text_path = None
        uploaded = _from_uploaded(row)
        if uploaded is not None:
            clips, clip, text_path, label = uploaded
            source, encoder_name = VideoSearchIndex.Source.UPLOADED, label
        else:
            try:
                encoder = search_encoder()
            except EncoderUnavailable as error:
                raise ValueError(str(error)) from None
            clips, clip = _from_frames(video, encoder)
            if encoder is not None:
                source, encoder_name = VideoSearchIndex.Source.ENCODER, settings.FRAMELEDGER_SEARCH_ENCODER
            else:
                source, encoder_name = VideoSearchIndex.Source.DESCRIPTOR, DESCRIPTOR_ID
        if not np.all(np.isfinite(clips)):
            raise ValueError("the features contain NaN or infinity")
        folder.mkdir(parents=True, exist_ok=True)
        vectors = folder / f"vectors-{token}.npy"
        from retrieval.features import l2_normalize

        with open(vectors, "wb") as handle:
            np.save(handle, l2_normalize(clips).astype(np.float16))
        written.append(_relative(vectors))
        text_name = _save_text(folder, token, text_path, clips.shape[1]) if text_path is not None else ""
        if text_name:
            written.append(text_name)
    except NoSource as reason:
        return _finish(row, status=VideoSearchIndex.Status.UNAVAILABLE, error=str(reason))
    except (ValueError, OSError, InvalidInput) as error:
        _remove(written)
        message = error.message if isinstance(error, InvalidInput) else str(error)
        return _finish(row, status=VideoSearchIndex.Status.FAILED, error=message[:2000])
    return _finish(
        row, status=VideoSearchIndex.Status.READY, source=source, encoder=encoder_name[:300], clip_length=clip,
        clip_count=int(clips.shape[0]), dim=int(clips.shape[1]), vectors=written[0],
        text_vectors=text_name, built_at=timezone.now(), build_seconds=round(time.monotonic() - started, 3), error="",
    )  # fmt: skip


def _finish(row: VideoSearchIndex, **fields) -> VideoSearchIndex | None:
    with transaction.atomic():
        current = VideoSearchIndex.objects.select_for_update().filter(pk=row.pk).first()
        if current is None:  # the video was deleted while its index was built
            _remove([fields.get("vectors"), fields.get("text_vectors")])
            return None
        old = [current.vectors, current.text_vectors]
        if fields["status"] != VideoSearchIndex.Status.READY:
            fields.update(vectors="", text_vectors="", clip_count=0, built_at=None)
        for name, value in fields.items():
            setattr(current, name, value)
        current.save()
        stale = [o for o in old if o and o not in {current.vectors, current.text_vectors}]
        transaction.on_commit(lambda: _remove(stale))
    return current
