"""Resumable uploads (tus 1.0.0, core and creation; ``annotator.entry.api.uploads``).

A maintainer creates an upload with the file's length (``do_create_upload``), then sends
its bytes in pieces, each at the offset the server has (``do_append_upload``); a piece
that does not start at that offset is refused (409), so a client that lost its connection
asks for the offset (``HEAD``) and goes on from there. Memory stays bounded: each piece is
copied to the ``.part`` file in 1 MiB blocks (and the ASGI handler spooled it to disk past
``FILE_UPLOAD_MAX_MEMORY_SIZE`` before the view ran). The piece that completes the file
moves it into the videos' originals (a rename, no copy) and queues its ingest exactly as a
one-request upload (``do_register_upload``), audited the same way.

Bundles and submissions use the same uploads (``kind`` ``bundle`` or ``submission``, with
the byte limit of their route): the piece that completes one only marks it complete; the
bundle or submission route then takes the file by its key (``do_consume_upload``), applies
the checks and caps it applies to a multipart file, and marks it consumed, in one
transaction; its bytes are removed after the commit. A refused file stays unconsumed (the
person may delete it, else the sweep does); a consumed one cannot be taken again.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotator.actions.ingest import do_register_upload
from annotator.base.disk import is_out_of_space, out_of_space, require_space
from annotator.base.errors import Conflict, InvalidInput, WorkflowError
from annotator.models import ResumableUpload

BLOCK = 1024 * 1024
UPLOAD_DIR = "uploads"


class TooLarge(WorkflowError):
    status = 413
    code = "too_large"


class StoredUpload(UploadedFile):
    """A finished ``.part`` file handed to ``FieldFile.save``: the storage moves it."""

    def __init__(self, path: Path, name: str):
        super().__init__(file=None, name=name, content_type="application/octet-stream", size=path.stat().st_size)
        self._path = path

    def temporary_file_path(self) -> str:
        return str(self._path)

    def close(self):  # nothing is open
        return None


def part_path(upload: ResumableUpload) -> Path:
    return Path(settings.MEDIA_ROOT) / UPLOAD_DIR / f"{upload.key}.part"


def max_bytes(kind: str) -> int:
    """The largest file an upload of ``kind`` may announce: its route's limit."""
    return {
        ResumableUpload.Kind.VIDEO: settings.FRAMELEDGER_MAX_VIDEO_BYTES,
        ResumableUpload.Kind.BUNDLE: settings.FRAMELEDGER_BUNDLE_MAX_BYTES,
        ResumableUpload.Kind.SUBMISSION: settings.FRAMELEDGER_MAX_SUBMISSION_UPLOAD_BYTES,
    }[kind]


def do_create_upload(*, actor, length: int, filename: str, title: str, kind: str = "video") -> ResumableUpload:
    """Precondition: the caller has checked that ``actor`` is a maintainer."""
    if kind not in ResumableUpload.Kind.values:
        raise InvalidInput(f"kind must be one of {', '.join(ResumableUpload.Kind.values)}", field="kind")
    title = (title or "").strip()
    if not title and kind == ResumableUpload.Kind.VIDEO:
        raise InvalidInput("title is required (Upload-Metadata: title)", field="title")
    if length <= 0:
        raise InvalidInput("the file is empty", field="Upload-Length")
    if length > max_bytes(kind):
        raise TooLarge(f"the file is {length} bytes; the limit of a {kind} is {max_bytes(kind)}")
    require_space(Path(settings.MEDIA_ROOT) / UPLOAD_DIR, length)
    upload = ResumableUpload.objects.create(
        key=secrets.token_hex(16),
        kind=kind,
        created_by=actor,
        length=length,
        filename=filename[:300],
        title=title[:300],
    )
    path = part_path(upload)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb"):
        pass
    return upload


def do_append_upload(*, actor, upload: ResumableUpload, offset: int, stream, declared: int | None) -> ResumableUpload:
    """Write a piece at ``offset`` (the server's), then complete the upload when it is whole."""
    if upload.completed_at is not None:
        raise Conflict("this upload is complete")
    if offset != upload.offset:
        raise Conflict(f"Upload-Offset is {offset}; the server has {upload.offset} bytes")
    room = upload.length - upload.offset
    if declared is not None and declared > room:
        raise InvalidInput(f"the piece is {declared} bytes; {room} remain", field="Content-Length")
    path = part_path(upload)
    require_space(path.parent, declared if declared is not None else min(room, BLOCK))
    written = 0
    with open(path, "r+b") as fh:
        fh.seek(offset)
        try:
            while block := stream.read(min(BLOCK, room - written + 1)):
                if written + len(block) > room:
                    raise InvalidInput(f"the piece is longer than the {room} bytes that remain", field="body")
                fh.write(block)
                written += len(block)
            fh.flush()
        except OSError as error:
            if not is_out_of_space(error):
                raise
            fh.truncate(offset)  # the piece is dropped whole: the offset stays where it was
            raise out_of_space(path.parent) from error
        fh.truncate(offset + written)
    updated = ResumableUpload.objects.filter(pk=upload.pk, offset=offset, completed_at__isnull=True).update(
        offset=offset + written, updated_at=timezone.now()
    )
    if not updated:
        raise Conflict("another request wrote to this upload meanwhile; ask for its offset")
    upload.refresh_from_db()
    if upload.offset == upload.length:
        complete(actor, upload)
    return upload


def complete(actor, upload: ResumableUpload) -> None:
    path = part_path(upload)
    if os.path.getsize(path) != upload.length:
        raise Conflict("the stored file does not have the announced length")
    if upload.kind != ResumableUpload.Kind.VIDEO:  # waits for its route (do_consume_upload)
        ResumableUpload.objects.filter(pk=upload.pk, completed_at__isnull=True).update(completed_at=timezone.now())
        upload.refresh_from_db()
        return
    with transaction.atomic():
        row = ResumableUpload.objects.select_for_update().get(pk=upload.pk)
        if row.completed_at is not None:
            return
        video, job = do_register_upload(actor=actor, uploaded_file=StoredUpload(path, row.filename), title=row.title)
        row.completed_at, row.video, row.job = timezone.now(), video, job
        row.save(update_fields=["completed_at", "video", "job", "updated_at"])
    upload.refresh_from_db()


@contextmanager
def do_consume_upload(*, upload: ResumableUpload, kind: str, field: str) -> Iterator[tuple[ResumableUpload, Path]]:
    """Take a finished bundle or submission upload: yields the row and the path of its
    bytes inside a transaction that marks it consumed when the block ends without an error
    (an error rolls back: the upload stays as it was). The bytes are removed after the
    commit. ``field`` names the request field in errors.

    Precondition: the caller has checked that the upload is the requester's
    (``access.access_upload``) and that the requester may use the route."""
    with transaction.atomic():
        upload = ResumableUpload.objects.select_for_update().get(pk=upload.pk)
        if upload.kind != kind:
            raise InvalidInput(f"upload {upload.key} is a {upload.kind} upload, not a {kind} one", field=field)
        if upload.consumed_at is not None:
            raise Conflict(f"upload {upload.key} was used already")
        if upload.completed_at is None:
            raise Conflict(f"upload {upload.key} has {upload.offset} of its {upload.length} bytes; finish it first")
        path = part_path(upload)
        yield upload, path
        upload.consumed_at = timezone.now()
        upload.save(update_fields=["consumed_at", "updated_at"])
        transaction.on_commit(lambda: path.unlink(missing_ok=True))


def expire_seconds() -> int:
    return int(getattr(settings, "FRAMELEDGER_UPLOAD_EXPIRE_SECONDS", 86400))


def do_expire_uploads(now=None) -> list[str]:
    """Unfinished uploads, and finished bundle or submission uploads no route took, untouched
    for ``FRAMELEDGER_UPLOAD_EXPIRE_SECONDS`` (a day) are removed with their bytes (run by the
    ingest sweep); returns their keys."""
    cutoff = (now or timezone.now()) - timedelta(seconds=expire_seconds())
    waiting = Q(completed_at__isnull=True) | (~Q(kind=ResumableUpload.Kind.VIDEO) & Q(consumed_at__isnull=True))
    stale = list(ResumableUpload.objects.filter(waiting, updated_at__lt=cutoff))
    for upload in stale:
        do_delete_upload(upload=upload)
    return [upload.key for upload in stale]


def do_delete_upload(*, upload: ResumableUpload) -> None:
    """tus termination: the unfinished upload (or a finished bundle or submission upload no
    route took) and its bytes are gone."""
    if upload.completed_at is not None and upload.kind == ResumableUpload.Kind.VIDEO:
        raise Conflict("this upload is complete; delete the video instead")
    if upload.consumed_at is not None:
        raise Conflict("this upload was used already")
    path = part_path(upload)
    upload.delete()
    path.unlink(missing_ok=True)
