"""Import published moment annotations (``annotator.base.moment_sources``) as moment-query
packets with a provisional ground-truth version: one packet per video.

* The packets use the task kind ``moment-queries-published`` (created on first use): the
  same fields as ``moment-queries`` but intervals at any precision (published labels are
  not on a grid, e.g. Charades-STA's 24.3 s); the scoring grid is the packet's
  ``parameters.grid`` (``{"step": 2.0}`` QVHighlights, ``{"step": 1.0}`` Charades-STA).
* A video without media gets an annotation-only ``Video`` row (``original_name``
  ``<source>:<video id>``, the source's exact duration, a nominal 30 fps for frame
  numbers, no files); a later import of the same video reuses it and its packet.
* Importing the same rows again changes nothing; changed rows become the packet's next
  provisional version. Publishing computes the calibration anchors as for any version.
* The whole import is one transaction: any error leaves the database as it was.

``check_import_moment_packets`` is what the entry points call (the page, ``POST
/api/moment-imports/``, ``manage.py import_moments``): it reads the files with one size
limit (``moment_sources.MAX_FILE_BYTES``) and one reader, then calls
``do_import_moment_packets``. ``check_stage_moment_files`` keeps the files the page
previewed (with the same limit) until its import POST names them.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import time
from collections.abc import Sequence

from django.db import transaction

from annotator.actions.packets import do_create_packet, validate_assignment
from annotator.actions.taskkinds import do_create_task_kind
from annotator.actions.versions import do_import_provisional_version
from annotator.base.canonical import sha256_hex
from annotator.base.errors import InvalidInput
from annotator.base.moment_sources import (
    SourceError,
    SourceVideo,
    count_rows,
    files_refusal,
    read_jsonl,
    rows_refusal,
    select,
    size_refusal,
)
from annotator.models import GroundTruthVersion, Packet, TaskKind, Video
from annotator.models.audit_log import record
from annotator.reads.access import may_import_labels
from annotator.reads.label_imports import PUBLISHED_KIND, own_packet_refusal, staged_folder, staged_path

# A previewed file is kept this long for its import (dropped by the next preview after that).
STAGED_SECONDS = 24 * 3600
NOMINAL_FPS = 30
PUBLISHED_SCHEMA = {
    "family": "moments",
    "root_key": "queries",
    "fields": [
        {"name": "query_id", "type": "string", "max_length": 200},
        {"name": "query", "type": "string", "max_length": 2000},
        {"name": "intervals", "type": "interval_list"},
    ],
    "identity_fields": ["query_id"],
    "boundary_fields": [],
    "tolerance": 0,
    "sort_keys": ["query_id"],
}


def published_kind(actor) -> TaskKind:
    kind = TaskKind.objects.filter(slug=PUBLISHED_KIND).first()
    if kind is None:
        kind = do_create_task_kind(
            actor=actor,
            slug=PUBLISHED_KIND,
            name="Moment queries (published labels)",
            scorer_id="moment-utility-v1",
            schema=PUBLISHED_SCHEMA,
            description="Acceptable intervals at the source's precision; the scoring grid is the packet's.",
        )
    return kind


def _video(source: SourceVideo, actor) -> Video:
    name = f"{source.source}:{source.video_id}"
    video = Video.objects.filter(original_name=name).first()
    if video is not None:
        return video
    return Video.objects.create(
        title=source.video_id,
        original_name=name,
        sha256=hashlib.sha256(name.encode()).hexdigest(),
        status=Video.Status.READY,
        frame_rate_num=NOMINAL_FPS,
        frame_rate_den=1,
        frame_count=math.ceil(source.duration * NOMINAL_FPS - 1e-9),
        duration=source.duration,
        created_by=actor,
    )


def _packet(source: SourceVideo, kind: TaskKind, people: Sequence, actor) -> tuple[Packet, bool]:
    existing = Packet.objects.filter(
        task_kind=kind, parameters__source=source.source, parameters__video_id=source.video_id
    ).first()
    if existing is not None:
        return existing, False
    packet = do_create_packet(
        actor=actor,
        title=f"{source.source} {source.video_id}",
        video=_video(source, actor),
        task_kind=kind,
        annotator_a=people[0],
        annotator_b=people[1],
        adjudicator=people[2],
        instructions="For every query, mark each interval where the described moment happens.",
        parameters={"source": source.source, "video_id": source.video_id, "grid": {"step": source.grid_step}},
    )
    return packet, True


@transaction.atomic
def do_import_moment_packets(
    videos: Sequence[SourceVideo], *, actor, annotator_a, annotator_b, adjudicator, file_name: str, file_sha256: str
) -> dict:
    """Create or update one packet per video; returns what was done, per video."""
    validate_assignment(annotator_a, annotator_b, adjudicator)
    kind = published_kind(actor)
    report = {"created": 0, "updated": 0, "unchanged": 0, "clipped": 0, "dropped": 0, "packets": []}
    for source in videos:
        packet, created = _packet(source, kind, (annotator_a, annotator_b, adjudicator), actor)
        # before anything is compared with the tier; the command line without --actor is the operator
        if actor is not None and not may_import_labels(actor, packet):
            raise InvalidInput(own_packet_refusal(source.video_id), field="videos")
        digest = source.sha256()
        latest = (
            GroundTruthVersion.objects.filter(packet=packet, tier=GroundTruthVersion.Tier.PROVISIONAL)
            .order_by("-number")
            .first()
        )
        if latest is not None and latest.manifest.get("source_sha256") == digest:
            state, version = "unchanged", latest
        else:
            label = f"{source.source} {file_name} ({file_sha256[:12]})"
            version = do_import_provisional_version(
                packet, source.queries, actor=actor, source=label, source_sha256=digest
            )
            state = "created" if created else "updated"
        report[state] += 1
        report["clipped"] += source.clipped
        report["dropped"] += source.dropped
        report["packets"].append(
            {"packet": packet.pk, "video_id": source.video_id, "version": version.pk, "queries": len(source.queries),
             "state": state}
        )  # fmt: skip
    record(
        actor,
        "import_moment_packets",
        kind,
        hashes={"file": file_sha256},
        details={k: v for k, v in report.items() if k != "packets"} | {"file": file_name, "videos": len(videos)},
    )
    return report


def _limit(value) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput("limit_videos must be a whole number", field="limit_videos") from None


def check_import_moment_packets(
    *, actor, source: str, file_name: str, data: bytes, reannotated: Sequence[bytes] = (),
    annotator_a, annotator_b, adjudicator, limit_videos=None, video_ids: Sequence[str] = (),
) -> dict:  # fmt: skip
    """Read an annotation file (and its re-annotation CSVs) from a user, then import it.

    Every file is refused past ``MAX_FILE_BYTES`` (an entry point reads at most one byte
    more than that); ``source`` must be a known source, the rows must read, ``limit_videos``
    (a whole number, at least 1) or ``video_ids`` choose the videos. Raises ``InvalidInput``
    (field ``file`` or ``limit_videos``), else returns ``do_import_moment_packets``'s report."""
    _refuse_large([data, *reannotated])
    limit = _limit(limit_videos)
    try:
        videos = read_jsonl(source or "", data, name=file_name, reannotated=list(reannotated))
        chosen = select(videos, limit=limit, video_ids=[v for v in video_ids if v])
    except SourceError as error:
        raise InvalidInput(str(error), field="file") from None
    return do_import_moment_packets(
        chosen, actor=actor, annotator_a=annotator_a, annotator_b=annotator_b, adjudicator=adjudicator,
        file_name=file_name, file_sha256=sha256_hex(data),
    )  # fmt: skip


def _refuse_large(files: Sequence[bytes]) -> None:
    """Sizes, the number of files and rows: the caps every archive-like upload has, checked
    before a file is parsed."""
    refusal = files_refusal(len(files) - 1)
    for data in files:
        refusal = refusal or size_refusal(len(data)) or rows_refusal(count_rows([data]))
    if refusal is not None:
        raise InvalidInput(refusal, field="file")


def check_stage_moment_files(files: Sequence[bytes]) -> list[str]:
    """Keep previewed files (the annotation file, then any re-annotation CSVs) for the
    import page's second POST: each at most ``MAX_FILE_BYTES``; then
    ``do_stage_moment_files``."""
    _refuse_large(files)
    return do_stage_moment_files(files)


def do_stage_moment_files(files: Sequence[bytes], *, now: float | None = None) -> list[str]:
    """Store each file under ``reads.label_imports.STAGED_DIR`` named by its SHA-256 (the
    same bytes twice are one file) and return the names; files kept longer than
    ``STAGED_SECONDS`` go first. Writes no row: a dry run stays a dry run."""
    now = time.time() if now is None else now
    names = [sha256_hex(data) for data in files]
    folder = staged_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        try:
            if old.name not in names and now - old.stat().st_mtime > STAGED_SECONDS:
                old.unlink()
        except FileNotFoundError:  # another preview dropped it
            continue
    for name, data in zip(names, files, strict=True):
        path = staged_path(name)
        if path.exists():
            os.utime(path, (now, now))  # kept from this preview on
            continue
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".part-")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    return names
