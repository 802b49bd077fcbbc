"""The remux is dropped once the proxy has replaced it (docs/media.md §4, "Disk").

The rule: a ready video's remux (the stream copy made first so annotation starts at once)
is deleted ``FRAMELEDGER_REMUX_KEEP_SECONDS`` (default 600) after its proxy was committed,
by the periodic ingest sweep. By then every open player has moved to the proxy (the player
polls ``renditions.json`` and switches on the same frame) and new pages open the proxy, so
nothing plays the remux any more; what stays on disk is the original and the proxy (the
source's bit rate, or the keyframes' floor where higher), about 2-2.25x the source, not 3x. The frame table,
thumbnails and exact frames are the proxy's already. A negative value keeps every remux.
Each drop is audited (``video.remux_dropped``, with the bytes freed).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.models import Job, Video
from annotator.models.audit_log import record


def keep_seconds() -> int:
    return int(getattr(settings, "FRAMELEDGER_REMUX_KEEP_SECONDS", 600))


def do_drop_superseded_remuxes(now=None) -> list[int]:
    """Delete the remux of every ready video whose proxy is older than the keep time;
    returns the ids of the videos whose remux was dropped."""
    keep = keep_seconds()
    if keep < 0:
        return []
    cutoff = (now or timezone.now()) - timedelta(seconds=keep)
    candidates = (
        Video.objects.filter(status=Video.Status.READY)
        .exclude(remux="")
        .exclude(proxy="")
        .filter(jobs__kind="ingest", jobs__status=Job.Status.DONE, jobs__updated_at__lte=cutoff)
        .values_list("pk", flat=True)
        .distinct()
    )
    dropped = []
    for pk in list(candidates):
        with transaction.atomic():
            row = Video.objects.select_for_update().filter(pk=pk).first()
            if row is None or not row.remux or not row.proxy:
                continue
            path = Path(row.remux.path)
            size = path.stat().st_size if path.exists() else 0
            name, sha = row.remux.name, row.remux_sha256
            row.remux.name, row.remux_sha256 = "", ""
            row.save(update_fields=["remux", "remux_sha256"])
            record(
                None,
                "video.remux_dropped",
                row,
                hashes={"remux_sha256": sha, "proxy_sha256": row.proxy_sha256},
                details={"file": name, "bytes": size, "keep_seconds": keep},
            )
            transaction.on_commit(lambda path=path: path.unlink(missing_ok=True))
        dropped.append(pk)
    return dropped
