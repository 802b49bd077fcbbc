"""Media no row points to: what a maintainer may remove to recover a full disk.

Files are left without a row when a process died between writing a file and committing its
row (or the other way round), and by versions of the project that wrote uploads straight to
their final name. :func:`orphan_media` walks the media folder and lists, with its size and
why it is an orphan:

* a file under ``videos/`` that no ``Video`` row names (original, remux, proxy, full,
  frame table, thumbnails), a storage's temporary ``.part-…`` file among them;
* a resumable upload's ``uploads/<key>.part`` with no ``ResumableUpload`` row;
* a working directory under ``tmp/`` (``ingest-<video>-…``, ``full-<video>-…``) whose video
  has no queued or running job, or any other entry of ``tmp/``.

Anything modified less than ``min_age`` seconds ago is left out: a write in flight commits
its row after its file. Other folders (search indexes, staged imports, the anchors log) are
not looked at. ``manage.py orphan_media`` prints the list; ``--delete`` removes it
(``annotator.actions.media_orphans``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotator.models import Job, ResumableUpload, Video

FILE_FIELDS = ("original", "remux", "proxy", "full", "frame_table", "thumbnails")
WORKDIR = re.compile(r"^(?:ingest|full)-(\d+)-")
OPEN = (Job.Status.QUEUED, Job.Status.RUNNING)


@dataclass(frozen=True)
class Orphan:
    name: str  # relative to MEDIA_ROOT
    size: int
    why: str


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return path.stat().st_size


def _old(path: Path, cutoff: float) -> bool:
    try:
        if path.is_dir():
            newest = max([path.stat().st_mtime] + [p.stat().st_mtime for p in path.rglob("*")])
        else:
            newest = path.stat().st_mtime
    except FileNotFoundError:
        return False
    return newest <= cutoff


def orphan_media(min_age: float = 3600.0) -> list[Orphan]:
    root = Path(settings.MEDIA_ROOT)
    cutoff = time.time() - min_age
    found: list[Orphan] = []
    named = {name for row in Video.objects.values_list(*FILE_FIELDS) for name in row if name}
    videos = root / "videos"
    if videos.is_dir():
        for path in sorted(p for p in videos.rglob("*") if p.is_file()):
            name = path.relative_to(root).as_posix()
            if name not in named and _old(path, cutoff):
                found.append(Orphan(name, path.stat().st_size, "no video names it"))
    uploads = root / "uploads"
    if uploads.is_dir():
        keys = set(ResumableUpload.objects.values_list("key", flat=True))
        for path in sorted(uploads.iterdir()):
            if path.is_file() and path.name.removesuffix(".part") not in keys and _old(path, cutoff):
                found.append(Orphan(path.relative_to(root).as_posix(), path.stat().st_size, "no upload names it"))
    tmp = root / "tmp"
    if tmp.is_dir():
        busy = set(Job.objects.filter(status__in=OPEN, video__isnull=False).values_list("video_id", flat=True))
        for path in sorted(tmp.iterdir()):
            match = WORKDIR.match(path.name)
            if match and int(match.group(1)) in busy:
                continue
            if _old(path, cutoff):
                why = "its video has no running job" if match else "a working file of no job"
                found.append(Orphan(path.relative_to(root).as_posix(), _size(path), why))
    return found
