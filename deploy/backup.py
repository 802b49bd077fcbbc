"""Back up and restore a FrameLedger installation: the PostgreSQL database and the media.

    python -m deploy.backup backup /backups/2026-12-01     # pg_dump + a copy of MEDIA_ROOT
    python -m deploy.backup restore /backups/2026-12-01    # into an empty database
    python manage.py verify_integrity --expect-head SEQ:SHA  # then check (head from backup.json)

``backup`` writes ``db.dump`` (``pg_dump --format=custom``), ``media/``, a copy of the audit
anchor log (``audit-anchors.log``, kept outside the media: ``annotator.base.anchor_log``) and
``backup.json`` (the SHA-256 of every media file and of the dump, and the audit chain head at
backup time).
``restore`` loads the dump with ``pg_restore`` into the database of ``DATABASE_URL`` (which must
exist and be empty), gathers the planner's statistics (``ANALYZE``: a restored database has
none, and its first plans would be made blind), copies the media back to ``MEDIA_ROOT`` and
checks every file against ``backup.json``; the anchor log is put back only where none is left (a machine lost with it).
Take the backup with the workers stopped, or accept that jobs running during it are redone
(their tasks are idempotent). Settings come from the environment as for the app.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("backup/restore needs DATABASE_URL on PostgreSQL (SQLite: copy the file while stopped)")
    return url


def media_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): sha256_of(p) for p in sorted(root.rglob("*")) if p.is_file()}


def backup(target: Path) -> dict:
    from django.conf import settings

    from annotator.reads.anchors import anchor_head, anchor_path
    from annotator.reads.verify import audit_chain_problems

    target.mkdir(parents=True, exist_ok=False)
    _, (seq, head) = audit_chain_problems()
    anchor_head("backup")  # into the anchor log outside the media, copied below
    subprocess.run(["pg_dump", "--format=custom", "--file", str(target / "db.dump"), database_url()], check=True)
    media = Path(settings.MEDIA_ROOT)
    if media.exists():
        shutil.copytree(media, target / "media")
    if anchor_path().exists():
        shutil.copy2(anchor_path(), target / "audit-anchors.log")
    manifest = {
        "audit_head": f"{seq}:{head}",
        "db_sha256": sha256_of(target / "db.dump"),
        "media": media_files(target / "media") if (target / "media").exists() else {},
    }
    (target / "backup.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def restore(source: Path) -> dict:
    from django.conf import settings

    manifest = json.loads((source / "backup.json").read_text())
    if sha256_of(source / "db.dump") != manifest["db_sha256"]:
        raise SystemExit("db.dump does not match backup.json")
    subprocess.run(
        ["pg_restore", "--no-owner", "--exit-on-error", "--dbname", database_url(), str(source / "db.dump")],
        check=True,
    )
    from django.db import connection

    from annotator.reads.anchors import anchor_path

    with connection.cursor() as cursor:  # pg_restore leaves the planner without statistics
        cursor.execute("ANALYZE")
    media = Path(settings.MEDIA_ROOT)
    if (source / "media").exists():
        shutil.copytree(source / "media", media, dirs_exist_ok=True)
    if (source / "audit-anchors.log").exists() and not anchor_path().exists():
        anchor_path().parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(source / "audit-anchors.log", anchor_path())
    bad = [
        name
        for name, sha in manifest["media"].items()
        if not (media / name).is_file() or sha256_of(media / name) != sha
    ]
    if bad:
        raise SystemExit(f"{len(bad)} media file(s) differ from the backup, first: {bad[0]}")
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Back up or restore the database and the media.")
    parser.add_argument("action", choices=["backup", "restore"])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
    import django

    django.setup()
    manifest = backup(args.folder) if args.action == "backup" else restore(args.folder)
    print(f"{args.action}: {len(manifest['media'])} media file(s), audit chain head {manifest['audit_head']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
