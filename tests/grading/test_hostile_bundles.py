"""The sandbox attacked the way an agent that wants a higher score (or wants to hurt the
other submissions) would, through the real path: each bundle is uploaded through the API,
run by a real Celery worker process, in the sandbox. The first tests are the cases that
broke the deny-list sandbox (issue 22), each named after it; then more hostile bundles,
each with what stopped it; then two jobs on two workers at once."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.conftest import database_url, fresh_producer_pools
from tests.factories import client_for
from tests.grading.sandbox_helpers import LEGAL_BUILD, ROWS_RUN, bundle, needs_sandbox, range_processes
from tests.grading.test_bundles import synthetic_version, wait_for

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ARGS = (
    'while [ $# -gt 0 ]; do case "$1" in --index-dir) index=$2;; --output) out=$2;; --queries) q=$2;; esac; '
    "shift; done\n"
)


@pytest.fixture
def bench(worker, settings, maintainer, annotator_a, annotator_b, adjudicator):
    """A moment version, the maintainer's client and the worker; runs ``submit``ted
    bundles and returns their run bodies."""
    from deploy.celery import app

    settings.FRAMELEDGER_BUNDLE_QUEUE = app.conf.task_default_queue
    settings.FRAMELEDGER_BUNDLE_CALL_SECONDS = 20
    settings.FRAMELEDGER_BUNDLE_BUILD_SECONDS = 30
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    return Bench(client_for(maintainer), version, *worker)


class Bench:
    def __init__(self, client, version, process, log):
        self.client, self.version, self.process, self.log = client, version, process, log

    def submit(self, data: bytes, label: str) -> int:
        upload = io.BytesIO(data)
        upload.name = f"{label}.zip"
        url = f"/api/versions/{self.version.pk}/bundles/"
        response = self.client.post(url, {"bundle": upload, "label": label}, format="multipart")
        assert response.status_code == 202, response.json()
        return response.json()["id"]

    def wait(self, *ids: int, seconds: float = 300) -> list[dict]:
        bodies = wait_for(self.client, list(ids), self.process, self.log, seconds=seconds)
        return [bodies[i] for i in ids]

    def run(self, data: bytes, label: str) -> dict:
        return self.wait(self.submit(data, label))[0]


def out(body: dict, stage: int = 0) -> str:
    return body["stages"][stage]["stdout"]


def err(body: dict, stage: int = 0) -> str:
    return body["stages"][stage]["stderr"]


def no_leftovers(run_id: int) -> None:
    base = Path(django_settings.FRAMELEDGER_SANDBOX_DIR or "/tmp")
    assert not list(base.glob(f"bundle-{run_id}-*")), "the job folder stayed"
    deadline = time.monotonic() + 5
    while range_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert range_processes() == [], "a process of a job uid survived"


# ------------------------------------------------------------ the cases that broke it


def test_answer_key_through_the_checkouts_git_is_out_of_reach(bench):
    checkout = Path(django_settings.BASE_DIR).resolve()
    targets = [
        "${PYTHONPATH%%/.venv/*}/.git",
        f"{checkout}/.git",
        f"{checkout}/data/qvhighlights",
        "/work/main/.git",
        "/work",
        str(django_settings.VAR_DIR),
        str(django_settings.MEDIA_ROOT),
        str(connection.settings_dict["NAME"]) if connection.vendor == "sqlite" else "/var/lib/postgresql",
        "/var/log",
        "/root",
        "/home",
    ]
    thief = (
        'echo "PYTHONPATH=$PYTHONPATH"\n'
        + "".join(
            f'if ls -d "{t}" >/dev/null 2>&1; then echo "REACHED {t}"; else echo "absent {t}"; fi\n' for t in targets
        )
        + 'git --git-dir="${PYTHONPATH%%/.venv/*}/.git" show HEAD:data/qvhighlights/highlight_val_release.jsonl'
        + " && echo REACHED-git\n"
        + f'git --git-dir="{checkout}/.git" log -1 && echo REACHED-git\n'
        + LEGAL_BUILD
    )
    body = bench.run(bundle(build=thief), "git-thief")
    assert body["status"] == "done", body
    assert "REACHED" not in out(body) and out(body).count("absent ") == len(targets)
    assert out(body).splitlines()[0] == "PYTHONPATH=/opt/site-packages"  # nothing in it names the checkout
    assert "relevant_windows" not in out(body)
    no_leftovers(body["id"])


def test_database_unix_sockets_are_not_inside(bench):
    sockets = ["/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432", "/run/mysqld/mysqld.sock",
               "/var/run/mysqld/mysqld.sock", "/var/run/redis/redis-server.sock", "/tmp/.s.PGSQL.5432"]  # fmt: skip
    on_host = [s for s in sockets if os.path.exists(s)]
    if connection.vendor == "postgresql":
        assert on_host, "PostgreSQL's UNIX socket is where the attack looked for it"
    probe = (
        "python3 - <<'PY'\nimport os, socket\n"
        f"for path in {sockets!r}:\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n        s.connect(path); print('CONNECTED', path)\n"
        "    except OSError as e:\n        print('refused', path, e.strerror)\n"
        "for port in (5432, 3306, 6379):\n"
        "    try:\n        socket.create_connection(('127.0.0.1', port), timeout=2); print('CONNECTED', port)\n"
        "    except OSError as e:\n        print('refused', port, e.strerror)\n"
        "PY\nfind / -path /proc -prune -o -type s -print 2>/dev/null | sed 's/^/SOCKET /'\n" + LEGAL_BUILD
    )
    body = bench.run(bundle(build=probe), "socket-thief")
    assert body["status"] == "done", body
    assert "CONNECTED" not in out(body) and "SOCKET" not in out(body), out(body)
    assert (
        out(body).count("No such file or directory") == len(sockets)
        and sum(line.startswith("refused") for line in out(body).splitlines()) == 9
    )
    no_leftovers(body["id"])


def test_a_stage_that_outlives_its_kill_dies_and_cannot_touch_the_next_job(bench, settings):
    settings.FRAMELEDGER_BUNDLE_CALL_SECONDS = 3
    hold = LEGAL_BUILD + "i=0; while [ $i -lt 120 ]; do setsid sleep 86400 & i=$((i+1)); done\n"
    survivor = (
        ARGS + "(setsid sh -c 'sleep 5; rm -f /job/out/*; mkfifo /job/out/call-1.jsonl' &)\nexec setsid sleep 86400\n"
    )
    first = bench.submit(bundle(build=hold, run=survivor), "survivor")
    second = bench.submit(bundle(), "trivial")
    first_body, second_body = bench.wait(first, second)
    assert first_body["status"] == "done" and first_body["stages"][1]["timed_out"], first_body
    assert second_body["status"] == "done" and second_body["outcome"] == "ok", second_body
    assert second_body["stages"][1]["rows"] == 3 and "Cannot fork" not in err(second_body)
    no_leftovers(first)


def test_jobs_do_not_share_a_uid_and_a_jobs_processes_do_not_starve_another(two_workers, bench, settings):
    settings.FRAMELEDGER_BUNDLE_PROCESSES = 64
    clock = 'echo "start $(date +%s.%N) uid $(id -u)"\n'
    greedy = (  # holds every process its uid may have for 8 s, then looks around
        clock + "python3 - <<'PY'\nimport os, time\nkids = []\ntry:\n    for _ in range(500):\n"
        "        pid = os.fork()\n        if pid == 0:\n            time.sleep(8)\n            os._exit(0)\n"
        "        kids.append(pid)\nexcept OSError as e:\n"
        "    print('fork refused after', len(kids), e.strerror, flush=True)\n"
        "for kid in kids:\n    os.waitpid(kid, 0)\nPY\n"
        "echo marker-greedy > /job/out/marker-greedy; ls /job/.. /tmp /run\n"
        "find / -path /proc -prune -o -name 'marker-*' -print 2>/dev/null\n"
        'echo "end $(date +%s.%N)"\n' + LEGAL_BUILD
    )
    modest = (
        clock + "sleep 2\necho marker-modest > /job/out/marker-modest\n"
        "i=0; while [ $i -lt 40 ]; do sleep 1 & i=$((i+1)); done; wait\n"
        "find / -path /proc -prune -o -name 'marker-*' -print 2>/dev/null\n"
        'echo "end $(date +%s.%N)"\n' + LEGAL_BUILD
    )
    a, b = bench.submit(bundle(build=greedy), "greedy"), bench.submit(bundle(build=modest), "modest")
    greedy_body, modest_body = bench.wait(a, b)
    assert greedy_body["status"] == modest_body["status"] == "done"
    assert "fork refused after " in out(greedy_body), greedy_body["stages"][0]
    refused = out(greedy_body).split("fork refused after ")[1].split()
    assert int(refused[0]) < 64 and "Resource temporarily unavailable" in out(greedy_body)
    assert "Cannot fork" not in err(modest_body) and modest_body["outcome"] == "ok", modest_body
    assert modest_body["stages"][1]["rows"] == 3
    spans = []
    for body in (greedy_body, modest_body):
        words = out(body).split()
        spans.append((float(words[words.index("start") + 1]), float(words[words.index("end") + 1])))
        assert words[words.index("uid") + 1] == str(body["enforcement"]["user"])
    assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1], f"the two builds did not overlap: {spans}"
    assert greedy_body["enforcement"]["user"] != modest_body["enforcement"]["user"]
    assert "/job/out/marker-modest" not in out(greedy_body) and "/job/out/marker-greedy" not in out(modest_body)
    no_leftovers(a)


def test_cleanup_of_a_deep_tree_ends_the_run_with_its_logs_and_no_leftovers(bench):
    deep = (
        "cd $TMPDIR; i=0; while [ $i -lt 1500 ]; do mkdir d && cd d || break; i=$((i+1)); done\n"
        "echo depth $i; mkfifo fifo; mkdir locked; touch locked/x; chmod 000 locked\n"
        "cd $TMPDIR; chmod 000 d; ln -s / loop; mkfifo /job/cache/fifo\n" + LEGAL_BUILD
    )
    body = bench.run(bundle(build=deep), "deep-tree")
    assert body["status"] == "done" and body["outcome"] == "ok", body
    assert "depth 1500" in out(body) and [s["name"] for s in body["stages"]] == ["build", "call-1"]
    no_leftovers(body["id"])


def test_an_output_path_made_a_folder_ends_done_with_its_logs_and_leaks_no_descriptor(bench):
    folder = ARGS + 'echo "making $out a folder"; mkdir "$out"\n'
    descriptors = []
    for number in range(3):
        body = bench.run(bundle(run=folder), f"folder-{number}")
        assert body["status"] == "done" and "call-1.jsonl is a folder: no rows" in body["outcome"], body
        assert "making /job/out/call-1.jsonl a folder" in out(body, 1) and body["reward"] == 0.0
        descriptors.append(len(os.listdir(f"/proc/{bench.process.pid}/fd")))
    assert descriptors[2] == descriptors[1], descriptors
    no_leftovers(body["id"])


def test_nothing_written_to_tmp_var_tmp_or_dev_shm_persists(bench):
    name = f"persist-{os.getpid()}-{time.monotonic_ns()}"
    places = ["/tmp", "/var/tmp", "/dev/shm", "/run", "$TMPDIR", "$XDG_CACHE_HOME"]
    write = "".join(f'echo secret > "{p}/{name}" && echo "wrote {p}"\n' for p in places) + LEGAL_BUILD
    look = "".join(f'if [ -e "{p}/{name}" ]; then echo "FOUND {p}"; fi\n' for p in places) + LEGAL_BUILD
    first = bench.run(bundle(build=write), "writer")
    second = bench.run(bundle(build=look), "looker")
    assert first["status"] == second["status"] == "done"
    assert out(first).count("wrote") >= 5 and "FOUND" not in out(second), (out(first), out(second))
    for place in ("/tmp", "/var/tmp", "/dev/shm", "/run"):
        assert not (Path(place) / name).exists()
    no_leftovers(second["id"])


# --------------------------------------------------------- more hostile bundles


def test_more_hostile_bundles_are_each_stopped(bench, settings):
    """Each bundle reports what it tried on stdout; the assertions say what stopped it."""
    abstract = socket.socket(socket.AF_UNIX)
    abstract_name = f"frameledger-hostile-{os.getpid()}"
    abstract.bind("\0" + abstract_name)
    abstract.listen(1)
    abstract.settimeout(0.2)
    worker_pid = bench.process.pid
    py = "python3 - <<'PY'\n{}\nPY\n"
    cases = {
        # /proc/1 is bwrap's init in the stage's own pid namespace: root's, not the bundle's
        "proc-one": "tr '\\0' ' ' < /proc/1/cmdline; echo\nls /proc/1/root/ && echo ROOT-LISTED\n"
        "cat /proc/1/environ && echo ENVIRON-READ\nls /proc | grep -c '^[0-9]' | sed 's/^/pids /'\n" + LEGAL_BUILD,
        "ptrace": py.format(
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"for pid in (1, {worker_pid}):\n    r = libc.ptrace(16, pid, 0, 0)\n"
            "    print('ptrace', pid, r, os.strerror(ctypes.get_errno()))"
        )
        + LEGAL_BUILD,
        # the worker's pid is another namespace's: no such process; kill -1 reaches the stage only
        "signals": f"kill -9 {worker_pid} || echo 'no worker here'\nkill -9 1 || echo 'init refused'\n"
        + LEGAL_BUILD
        + "kill -9 -1\n",
        "abstract-socket": py.format(
            "import socket\ns = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    s.connect('\\0{abstract_name}'); print('CONNECTED')\n"
            "except OSError as e:\n    print('abstract', e.strerror)"
        )
        + LEGAL_BUILD,
        "fork-bomb": "bomb() { bomb | bomb & }\nbomb\nsleep 3\n" + LEGAL_BUILD,
        "symlink-and-hardlink": LEGAL_BUILD,
        "setuid": "su root -c 'id -u' </dev/null 2>&1 | head -2; mount -t tmpfs none /job/tmp 2>&1 | head -1\n"
        'echo "still $(id -u)"\n' + LEGAL_BUILD,
        "answer-hunt": "find / \\( -path /proc -o -path /usr -o -path /opt -o -path /sys \\) -prune -o "
        "\\( -name '*.json*' -o -name '*.sqlite3' -o -name '*.npz' -o -name '*.git' \\) -print 2>/dev/null"
        " | sed 's/^/FOUND /'\n" + LEGAL_BUILD,
        "index-tamper": LEGAL_BUILD,
    }
    runs = {
        "symlink-and-hardlink": ARGS + 'ln /job/app/run.sh "$out.hard" 2>&1; ln /etc/passwd "$TMPDIR/p" 2>&1\n'
        'ln -s /etc/passwd "$out"\n',
        "index-tamper": ARGS + 'echo x > "$index/manifest" 2>&1; rm -f "$index/manifest" 2>&1\n' + ROWS_RUN,
    }
    ids = {name: bench.submit(bundle(build=build, run=runs.get(name, ROWS_RUN)), name) for name, build in cases.items()}
    # Limits are pinned when a bundle is submitted: these three get small ones.
    settings.FRAMELEDGER_BUNDLE_DISK_BYTES = 30 * 1024**2
    fill = "head -c 100000000 /dev/zero > $TMPDIR/fill\ndu -sk $TMPDIR | sed 's/^/KIB /'\nrm $TMPDIR/fill\n"
    ids["disk-fill"] = bench.submit(bundle(build=fill + LEGAL_BUILD), "disk")
    settings.FRAMELEDGER_BUNDLE_DISK_BYTES = 16 * 1024**3
    settings.FRAMELEDGER_BUNDLE_TMPFS_BYTES = 8 * 1024**2
    ids["shm-fill"] = bench.submit(bundle(build="head -c 50000000 /dev/zero > /dev/shm/fill\n" + LEGAL_BUILD), "shm")
    settings.FRAMELEDGER_BUNDLE_CGROUP_MEMORY_BYTES = 64 * 1024**2
    hog = py.format("x = bytearray(400 * 1024 * 1024)\nx[::4096] = b'1' * len(x[::4096])\nprint('ALLOCATED')")
    hog += 'echo "hog exit $?"\n'
    ids["memory-hog"] = bench.submit(bundle(build=hog + LEGAL_BUILD), "memory")
    bodies = dict(zip(ids, bench.wait(*ids.values()), strict=True))
    try:
        with pytest.raises(TimeoutError):
            abstract.accept()
    finally:
        abstract.close()

    def stdout(name: str, stage: int = 0) -> str:
        return out(bodies[name], stage)

    assert all(b["status"] == "done" for b in bodies.values()), {k: b["outcome"] for k, b in bodies.items()}
    assert " /work" not in stdout("proc-one") and "ROOT-LISTED" not in stdout("proc-one")
    assert "ENVIRON-READ" not in stdout("proc-one") and "Permission denied" in err(bodies["proc-one"])
    assert int(stdout("proc-one").split("pids ")[1].split()[0]) < 10  # the stage's own processes only
    assert "ptrace 1 -1 Operation not permitted" in stdout("ptrace")
    assert f"ptrace {worker_pid} -1 Operation not permitted" in stdout("ptrace")  # attach: the seccomp filter
    assert "no worker here" in stdout("signals") and bench.process.poll() is None
    assert "abstract Connection refused" in stdout("abstract-socket")
    bomb = bodies["fork-bomb"]
    assert "Cannot fork" in err(bomb) or "Resource temporarily unavailable" in err(bomb)
    assert bomb["stages"][0]["enforced"]["cgroups"].get("pids", "v1 pids.max=512").endswith("512")
    links = bodies["symlink-and-hardlink"]
    assert err(links, 1) == "" and "Invalid cross-device link" in stdout("symlink-and-hardlink", 1)
    assert links["stages"][1]["rows"] == 0 and "not a plain file" in links["outcome"]
    assert "still " + str(bodies["setuid"]["enforcement"]["user"]) in stdout("setuid")
    assert "\n0\n" not in stdout("setuid")
    found = [line.split(" ", 1)[1] for line in stdout("answer-hunt").splitlines() if line.startswith("FOUND ")]
    assert found and all(path.startswith("/job/") for path in found), found
    assert not any("gt" in Path(p).name or "sqlite" in p for p in found)
    tamper = stdout("index-tamper", 1) + err(bodies["index-tamper"], 1)
    assert tamper.count("Read-only file system") == 2 and bodies["index-tamper"]["stages"][1]["rows"]
    disk = bodies["disk-fill"]
    assert "No space left on device" in err(disk) and disk["outcome"] == "ok", disk  # the job's filesystem is full
    assert int(stdout("disk-fill").split("KIB ")[1].split()[0]) <= 30 * 1024 + 16
    assert disk["enforcement"]["job_disk"]["free_bytes"] == 30 * 1024**2
    assert "No space left on device" in err(bodies["shm-fill"])
    hog_body = bodies["memory-hog"]
    assert "ALLOCATED" not in stdout("memory-hog") and "hog exit 137" in stdout("memory-hog")  # the OOM killer
    assert hog_body["stages"][0]["enforced"]["cgroups"]["memory"].endswith(str(64 * 1024**2))
    for run_id in ids.values():
        no_leftovers(run_id)


# ------------------------------------------------------------ two workers at once


@pytest.fixture
def two_workers(worker, settings, tmp_path):
    """A second worker process on the test queue, so that two jobs run at once."""
    from deploy.celery import app

    queue = app.conf.task_default_queue
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_QUEUE": queue,
        "FRAMELEDGER_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    log = open(tmp_path / "worker-2.log", "w")  # noqa: SIM115
    second = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "deploy", "worker", "--pool=solo", "-Q", queue, "-n", "second@%h",
         "--loglevel=INFO"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=settings.BASE_DIR,
    )  # fmt: skip
    # Ready when it says so (on a loaded machine its start takes longer than any fixed pause;
    # a job submitted before would go to the first worker, after the other one).
    deadline = time.monotonic() + 90
    while "ready." not in (tmp_path / "worker-2.log").read_text(errors="replace"):
        assert second.poll() is None and time.monotonic() < deadline, (tmp_path / "worker-2.log").read_text()[-2000:]
        time.sleep(0.2)
    yield second
    second.send_signal(signal.SIGTERM)
    try:
        second.wait(timeout=20)
    except subprocess.TimeoutExpired:
        second.kill()
    log.close()
    fresh_producer_pools(app)
