"""The two servers ``bench/large_upload.py`` measures, behind one interface.

``Embedded``: the embedded default as ``bin/run-demo`` runs it (``python -m deploy.serve``:
uvicorn; one Celery worker, solo, with beat) on a fresh SQLite database. ``Stack``: the
production topology, ``bin/run-stack`` (nginx in front, gunicorn with uvicorn workers, one
Celery worker per queue, PostgreSQL, Redis), on a fresh PostgreSQL database of its own.

Each gives: its port, its media folder, the pids whose memory is "the server" (the
embedded process; gunicorn and nginx with their workers), the bytes its access log says it
sent for a URL part, and ``manage()`` in its settings.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import uuid
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tests.http.live_server import free_port, wait_for_port  # noqa: E402

USER_SCRIPT = (
    "from django.contrib.auth.models import Group, User;"
    "from annotator.actions.tokens import do_issue_token;"
    "u = User.objects.create_user('bench', password='x');"
    "u.groups.add(Group.objects.get_or_create(name='maintainers')[0]);"
    "print(do_issue_token(u)[1])"
)

# A packet on the uploaded video, and a session of its first annotator (the browser's seeks).
PACKET_SCRIPT = (
    "from django.contrib.auth.models import User; from django.conf import settings;"
    "from django.test import Client;"
    "from annotator.actions.packets import do_create_packet;"
    "from annotator.models import TaskKind, Video;"
    "people = [User.objects.create_user(f'bench-{{n}}', password='x') for n in ('a', 'b', 'adj')];"
    "packet = do_create_packet(actor=User.objects.get(username='bench'), title='seeks',"
    " video=Video.objects.get(pk={video}), task_kind=TaskKind.objects.get(slug='action-ledger'),"
    " annotator_a=people[0], annotator_b=people[1], adjudicator=people[2]);"
    "c = Client(); c.force_login(people[0]);"
    "print(packet.pk, settings.SESSION_COOKIE_NAME, c.cookies[settings.SESSION_COOKIE_NAME].value)"
)


def rss_of(pids: list[int]) -> int:
    """Resident memory of ``pids`` together (bytes); a pid gone counts 0."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return []
    return [int(p) for p in found]


class Embedded:
    name = "embedded default (uvicorn, SQLite)"
    key = "embedded"
    ingest_starts_with_upload = False  # its worker is started after the upload

    def __init__(self, var: Path):
        self.var = var
        self.port = free_port()
        self.media = var / "media"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_URL", "DATABASE_URL"))},
            "DJANGO_SETTINGS_MODULE": "deploy.settings",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_DEBUG": "0",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "FRAMELEDGER_VAR_DIR": str(var),
            "LOG_FORMAT": "text",
            "TMPDIR": str(var / "tmp"),
            "FRAMELEDGER_INGEST_SWEEP_SECONDS": "10",
            # The remux is dropped this long after the proxy replaced it (600 s by default).
            "FRAMELEDGER_REMUX_KEEP_SECONDS": "5",
        }
        (var / "tmp").mkdir(parents=True, exist_ok=True)
        self.server = self.worker = None

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self) -> str:
        """Migrate, start the server; the maintainer's API token."""
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput")  # as bin/run-demo does
        token = self.manage("shell", "-c", USER_SCRIPT).strip().splitlines()[-1]
        command = [sys.executable, "-m", "deploy.serve", "-b", "127.0.0.1", "-p", str(self.port)]
        self.server_log = open(self.var / "server.log", "w")  # noqa: SIM115
        self.server = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.server_log, stderr=subprocess.STDOUT
        )
        wait_for_port(self.port, self.server)
        return token

    def start_worker(self) -> None:
        command = [str(ROOT / ".venv/bin/celery"), "-A", "deploy", "worker", "-B", "--loglevel=INFO", "--pool=solo",
                   "--concurrency=1", "-Q", "frameledger,frameledger-bundles"]  # fmt: skip
        self.worker_log = open(self.var / "worker.log", "w")  # noqa: SIM115
        self.worker = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.worker_log, stderr=subprocess.STDOUT
        )

    def server_pids(self) -> list[int]:
        return [self.server.pid]

    def sent(self, part: str) -> tuple[int, int]:
        """Bytes the access log says were sent for URLs containing ``part``, and how many answers."""
        total = count = 0
        for line in (self.var / "server.log").read_text(errors="replace").splitlines():
            if "frameledger.access" in line and part in line and "sent=" in line:
                total += int(line.split("sent=", 1)[1].split()[0])
                count += 1
        return total, count

    def stop(self) -> None:
        for process in (self.worker, self.server):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()


class Stack:
    name = "bin/run-stack (nginx, gunicorn + uvicorn, PostgreSQL)"
    key = "stack"
    ingest_starts_with_upload = True  # its workers run from the start

    def __init__(self, var: Path, database_url: str, redis_url: str):
        from tests.deploy.stack import recreate_database

        self.var, self.database_url = var, database_url
        recreate_database(database_url)
        os.environ.setdefault("STACK_TEST_REDIS_URL", redis_url)
        self.port = 0
        self.media = var / "stack" / "media"
        self._exit = ExitStack()

    def start(self) -> str:
        from tests.deploy.stack import run_stack

        self.stack = self._exit.enter_context(
            run_stack(
                self.var,
                database_url=self.database_url,
                extra_env={
                    "STACK_SEED": "0",
                    "FRAMELEDGER_INGEST_SWEEP_SECONDS": "10",
                    "FRAMELEDGER_REMUX_KEEP_SECONDS": "5",
                },  # fmt: skip
            )
        )
        self.port = self.stack.port
        self.env = self.stack.env
        return self.manage("shell", "-c", USER_SCRIPT).strip().splitlines()[-1]

    def start_worker(self) -> None:
        pass  # running since the start

    def manage(self, *args: str) -> str:
        return self.stack.manage(*args)

    def server_pids(self) -> list[int]:
        processes = self.stack.state()["processes"]
        pids = []
        for name in ("web", "nginx"):
            pids.append(processes[name])
            pids.extend(children(processes[name]))
        return pids

    def sent(self, part: str) -> tuple[int, int]:
        total = count = 0
        log = self.var / "stack" / "nginx" / "access.log"
        for line in log.read_text(errors="replace").splitlines():
            entry = json.loads(line)
            if part in entry["uri"]:
                total += int(entry["bytes"])
                count += 1
        return total, count

    def stop(self) -> None:
        self._exit.close()


def make_target(key: str, root: Path):
    var = Path(tempfile.mkdtemp(prefix=f"fl-large-{key}-", dir=root / "var"))
    if key == "embedded":
        return Embedded(var)
    suffix = uuid.uuid4().hex[:6]
    base = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/frameledger")
    return Stack(
        var, f"{base.rstrip('/')}_bench_{suffix}", os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
    )


def packet_for(target, video_id: int) -> tuple[int, str, str]:
    """(packet id, session cookie name, cookie value) for the browser."""
    out = target.manage("shell", "-c", PACKET_SCRIPT.format(video=video_id)).strip().splitlines()[-1]
    packet, name, value = out.split()
    return int(packet), name, value
