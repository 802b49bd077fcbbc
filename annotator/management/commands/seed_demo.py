"""Demo data a newcomer can click through (idempotent; passwords are reset and printed, or,
with ``--accounts-file``, kept in that file, mode 0600, for ``manage.py demo_accounts`` and
``bin/run-demo`` to print once the server answers).

- users ``annotator_a``, ``annotator_b``, ``adjudicator``, ``maintainer`` (maintainers group);
- a generated 24 fps demo video with the GTEA video's frame count (25,692 frames,
  every frame showing its own index as a barcode), ingested like any upload;
- one action-ledger packet (the real GTEA Gaze+ vocabulary) assigned to the three people;
- a provisional ground-truth version imported from the published ``Ahmad_American.txt``.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from annotator.actions.ingest import do_ingest_video, do_register_upload
from annotator.actions.packets import do_create_packet
from annotator.base.media.synthetic import write_video
from annotator.models import GroundTruthVersion, Packet, TaskKind, Video

DEMO_PACKET = "Demo: GTEA Gaze+ Ahmad, American breakfast"
DEMO_VIDEO = "Demo video (barcode frames, GTEA frame count)"
GTEA_FRAMES = 25692
LABELS = (
    Path(settings.BASE_DIR)
    / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
)
PEOPLE = ["annotator_a", "annotator_b", "adjudicator", "maintainer"]


def sign_in_box(url: str, passwords: dict[str, str]) -> str:
    """The framed box ``bin/run-demo`` prints last: where to go, and who can sign in with what."""
    lines = [
        f"FrameLedger demo: open {url}",
        "",
        "Sign in as one of (passwords are new on every start of bin/run-demo):",
        *(f"  {name:12s} {passwords[name]}" for name in PEOPLE),
        "",
        "Print this again: .venv/bin/python manage.py demo_accounts",
    ]
    width = max(len(line) for line in lines)
    rule = "+" + "-" * (width + 2) + "+"
    return "\n".join([rule, *(f"| {line:<{width}} |" for line in lines), rule]) + "\n"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600 from the first byte)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(temporary, path)


class Command(BaseCommand):
    help = "Create the demo users, video, packet and provisional version."

    def add_arguments(self, parser):
        parser.add_argument("--frames", type=int, default=GTEA_FRAMES, help="demo video length in frames")
        parser.add_argument(
            "--accounts-file",
            help="write the sign-in box (URL, accounts, passwords) to this file, mode 0600, instead of printing it",
        )
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="the address the sign-in box names")

    def handle(self, *args, frames: int, accounts_file: str | None, url: str, **options):
        passwords = self.make_users()
        packet = Packet.objects.filter(title=DEMO_PACKET).first()
        if packet is None:
            video = self.make_video(frames)
            packet = do_create_packet(
                actor=User.objects.get(username="maintainer"),
                title=DEMO_PACKET,
                video=video,
                task_kind=TaskKind.objects.get(slug="action-ledger"),
                annotator_a=User.objects.get(username="annotator_a"),
                annotator_b=User.objects.get(username="annotator_b"),
                adjudicator=User.objects.get(username="adjudicator"),
                instructions=(
                    "Label every action: one verb, the set of nouns it acts on, and the first and last frame "
                    "(inclusive) where it happens. Work alone; freeze when you are done."
                ),
            )
            self.stdout.write(f"created packet {packet.pk} ({packet.sha256[:12]}…)")
        if not GroundTruthVersion.objects.filter(packet=packet, tier="provisional").exists():
            if packet.video.frame_count >= GTEA_FRAMES:
                call_command(
                    "import_gtea_labels", str(LABELS), packet=packet.pk, actor="maintainer", stdout=self.stdout
                )
            else:
                self.stdout.write("demo video shorter than the GTEA labels: provisional import skipped")
        if accounts_file:
            write_private(Path(accounts_file), sign_in_box(url, passwords))
            self.stdout.write(f"demo accounts ready: new passwords in {accounts_file}")
            return
        self.stdout.write(self.style.SUCCESS("Demo accounts (passwords are new on every start):"))
        for name in PEOPLE:
            self.stdout.write(f"  {name:12s} {passwords[name]}")

    def make_users(self) -> dict[str, str]:
        # Each demo account in its role's group, as the People page's invitation does.
        groups = {
            "maintainer": Group.objects.get(name="maintainers"),
            "annotator_a": Group.objects.get_or_create(name="annotators")[0],
            "annotator_b": Group.objects.get_or_create(name="annotators")[0],
            "adjudicator": Group.objects.get_or_create(name="adjudicators")[0],
        }
        passwords = {}
        for name in PEOPLE:
            user, _ = User.objects.get_or_create(username=name)
            passwords[name] = secrets.token_urlsafe(9)
            user.set_password(passwords[name])
            user.save()
            if name in groups:
                user.groups.add(groups[name])
        return passwords

    def make_video(self, frames: int) -> Video:
        self.stdout.write(f"generating a {frames}-frame demo video…")
        with tempfile.TemporaryDirectory() as tmp:
            path = write_video(Path(tmp) / "demo.mp4", "h264-24-gop250", frames, width=160, height=96)
            upload = SimpleUploadedFile("demo.mp4", path.read_bytes(), content_type="video/mp4")
        with transaction.atomic():
            video, job = do_register_upload(
                actor=User.objects.get(username="maintainer"), uploaded_file=upload, title=DEMO_VIDEO
            )
        # The worker may already have picked the job up; ingesting here as well keeps the
        # seed self-contained, and the task skips a job that is already done.
        video.refresh_from_db()
        job.refresh_from_db()
        if video.status != Video.Status.READY:
            self.stdout.write("ingesting (proxy, frame table, thumbnails)…")
            # One pass, proxy first, here: no worker needed (the remux would leave the proxy
            # to a worker).
            do_ingest_video(video, job, chunk_frames=0, remux_first=False)
            video.refresh_from_db()
        self.stdout.write(f"video {video.pk}: {video.frame_count} frames at {video.frame_rate} fps")
        return video
