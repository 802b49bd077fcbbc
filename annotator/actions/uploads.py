"""Resumable uploads (tus 1.0.0, core and creation; ``annotator.api.uploads``).

A maintainer creates an upload with the file's length (``do_create_upload``), then sends
its bytes in pieces, each at the offset the server has (``do_append_upload``); a piece
that does not start at that offset is refused (409), so a client that lost its connection
asks for the offset (``HEAD``) and goes on from there. Memory stays bounded: each piece is
copied to the ``.part`` file in 1 MiB blocks (and the ASGI handler spooled it to disk past
``FILE_UPLOAD_MAX_MEMORY_SIZE`` before the view ran). The piece that completes the file
moves it into the videos' originals (a rename, no copy) and queues its ingest exactly as a
one-request upload (``do_register_upload``), audited the same way.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotator.actions.ingest import do_register_upload
from annotator.errors import Conflict, InvalidInput, WorkflowError
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


def do_create_upload(*, actor, length: int, filename: str, title: str) -> ResumableUpload:
    """Precondition: the caller has checked that ``actor`` is a maintainer."""
    title = (title or "").strip()
    if not title:
        raise InvalidInput("title is required (Upload-Metadata: title)", field="title")
    if length <= 0:
        raise InvalidInput("the file is empty", field="Upload-Length")
    if length > settings.FRAMELEDGER_MAX_VIDEO_BYTES:
        raise TooLarge(f"the file is {length} bytes; the limit is {settings.FRAMELEDGER_MAX_VIDEO_BYTES}")
    upload = ResumableUpload.objects.create(
        key=secrets.token_hex(16), created_by=actor, length=length, filename=filename[:300], title=title[:300]
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
    written = 0
    with open(path, "r+b") as fh:
        fh.seek(offset)
        while block := stream.read(min(BLOCK, room - written + 1)):
            if written + len(block) > room:
                raise InvalidInput(f"the piece is longer than the {room} bytes that remain", field="body")
            fh.write(block)
            written += len(block)
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
    with transaction.atomic():
        row = ResumableUpload.objects.select_for_update().get(pk=upload.pk)
        if row.completed_at is not None:
            return
        video, job = do_register_upload(actor=actor, uploaded_file=StoredUpload(path, row.filename), title=row.title)
        row.completed_at, row.video, row.job = timezone.now(), video, job
        row.save(update_fields=["completed_at", "video", "job", "updated_at"])
    upload.refresh_from_db()


def expire_seconds() -> int:
    return int(getattr(settings, "FRAMELEDGER_UPLOAD_EXPIRE_SECONDS", 86400))


def do_expire_uploads(now=None) -> list[str]:
    """Unfinished uploads untouched for ``FRAMELEDGER_UPLOAD_EXPIRE_SECONDS`` (a day) are
    removed with their bytes (run by the ingest sweep); returns their keys."""
    cutoff = (now or timezone.now()) - timedelta(seconds=expire_seconds())
    stale = list(ResumableUpload.objects.filter(completed_at__isnull=True, updated_at__lt=cutoff))
    for upload in stale:
        do_delete_upload(upload=upload)
    return [upload.key for upload in stale]


def do_delete_upload(*, upload: ResumableUpload) -> None:
    """tus termination: the unfinished upload and its bytes are gone."""
    if upload.completed_at is not None:
        raise Conflict("this upload is complete; delete the video instead")
    path = part_path(upload)
    upload.delete()
    path.unlink(missing_ok=True)
