"""Several machines on one: network namespaces as hosts (``bin/run-multihost``, the CI test
``tests/deploy/test_multihost.py``; docs/deploy.md, "Multi-host drill").

A :class:`Layout` makes a switch namespace holding a bridge, and one namespace per host joined
to it by a veth pair, with an address of ``10.231.0.0/24`` inside the host's namespace only
(the root namespace gets no interface, no address and no route: no traffic leaves the
namespaces). Every process of a host runs through :meth:`Layout.spawn` / :meth:`Layout.run`:
``ip netns exec`` then ``unshare --mount`` with the host's own ``/tmp`` and ``var/`` bind-mounted
over the real ones, and the one shared media folder bind-mounted at ``var/media`` (standing in
for NFS). The default layout of the settings (media under ``FRAMELEDGER_VAR_DIR``) thus puts
every file a host writes in its own folder except the media.

:meth:`Layout.close` kills every process of every host namespace and deletes the namespaces
(their veths go with them; the mounts die with the mount namespaces of the processes), also
after a failure; callers use the layout as a context manager and trap SIGINT/SIGTERM.
Needs root and ``ip``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deploy.keys import shared_signing_key

ROOT = Path(__file__).resolve().parent.parent
SUBNET = "10.231.0"
# Inside each host: bind the host's folders over /tmp and var/, then the shared media.
# /tmp last: the layout's folder is outside /tmp (LAYOUT_PARENT), so the host still reads its
# secret key and the shared inputs there. A checkout that itself lies under /tmp (a clone in
# /tmp/…) would vanish under the host's own /tmp: it is kept aside first and bound back at
# the same path inside it.
MOUNTS = (
    'mount --bind "$FL_HOST_DIR/var" "$FL_ROOT/var" && mount --bind "$FL_MEDIA" "$FL_ROOT/var/media" && '
    'case "$FL_ROOT" in /tmp/*) mkdir -p "$FL_HOST_DIR/checkout" && '
    'mount --rbind "$FL_ROOT" "$FL_HOST_DIR/checkout";; esac && '
    'mount --bind "$FL_HOST_DIR/tmp" /tmp && '
    'case "$FL_ROOT" in /tmp/*) mkdir -p "$FL_ROOT" && mount --rbind "$FL_HOST_DIR/checkout" "$FL_ROOT";; esac && '
    'cd "$FL_ROOT" && exec "$@"'
)
LAYOUT_PARENT = Path("/var/tmp")


def cgroup_mounts(mounts: str | None = None) -> str:
    """Shell commands that mount again, inside a host, the cgroup hierarchies of this machine.
    ``ip netns exec`` mounts a fresh sysfs, which hides ``/sys/fs/cgroup``: without this a
    bundles host would run its stages with no cgroup (the sandbox says "none on this host")
    where a real machine has them."""
    if mounts is None:
        mounts = Path("/proc/self/mounts").read_text()
    steps = []
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[1].startswith("/sys/fs/cgroup"):
            continue
        source, target, kind, options = fields[:4]
        if kind == "tmpfs" and target == "/sys/fs/cgroup":
            steps.insert(0, "mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup")
        elif kind in ("cgroup", "cgroup2"):
            steps.append(f"mkdir -p {target} && mount -t {kind} -o {options} {source} {target}")
    return " && ".join(steps + [""])


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def namespaces() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


class Host:
    def __init__(self, layout: Layout, name: str, address: str):
        self.layout, self.name, self.address = layout, name, address
        self.netns = f"{layout.tag}-{name}"
        self.dir = layout.dir / "hosts" / name
        for sub in ("tmp", "var/media"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "tmp").chmod(0o1777)
        self.logs = self.dir / "logs"
        self.logs.mkdir(exist_ok=True)

    def pids(self) -> list[int]:
        out = _ip("netns", "pids", self.netns, check=False).stdout
        return [int(p) for p in out.split()]

    def kill(self) -> int:
        """SIGKILL every process of this host (a machine losing power); returns how many."""
        pids = self.pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(pids)


class Layout:
    def __init__(self, tag: str | None = None, keep: bool = False):
        self.tag = tag or f"fl{secrets.token_hex(3)}"
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix=f"frameledger-{self.tag}-", dir=LAYOUT_PARENT))
        self.switch = f"{self.tag}-sw"
        self.media = self.dir / "media"
        self.media.mkdir(exist_ok=True)
        self.hosts: dict[str, Host] = {}
        self.procs: list[subprocess.Popen] = []
        self.cgroups = cgroup_mounts()
        (ROOT / "var").mkdir(exist_ok=True)  # the mount point of each host's own var/

    def __enter__(self) -> Layout:
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add_host(self, name: str, number: int) -> Host:
        host = Host(self, name, f"{SUBNET}.{number}")
        _ip("netns", "add", host.netns)
        port = f"v{number}"
        _ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
        _ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
        _ip("-n", host.netns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.netns, "link", "set", "eth0", "up")
        _ip("-n", host.netns, "link", "set", "lo", "up")
        self.hosts[name] = host
        return host

    def command(self, host: Host, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", host.netns, "unshare", "--mount", "--propagation", "private", "--"] + [
            "sh",
            "-c",
            self.cgroups + MOUNTS,
            "sh",
            *argv,
        ]

    def host_env(self, host: Host, env: dict) -> dict:
        return {**env, "FL_HOST_DIR": str(host.dir), "FL_ROOT": str(ROOT), "FL_MEDIA": str(self.media)}

    def spawn(self, host: Host, name: str, argv: list[str], env: dict) -> subprocess.Popen:
        log = open(host.logs / f"{name}.log", "ab")  # noqa: SIM115 - kept open by the child
        proc = subprocess.Popen(
            self.command(host, argv), stdout=log, stderr=subprocess.STDOUT, env=self.host_env(host, env)
        )
        log.close()
        self.procs.append(proc)
        return proc

    def run(self, host: Host, argv: list[str], env: dict, timeout: float = 300) -> str:
        result = subprocess.run(
            self.command(host, argv), env=self.host_env(host, env), capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"{host.name}: {' '.join(argv)} failed:\n{result.stdout[-2000:]}{result.stderr[-4000:]}")
        return result.stdout

    def log(self, host: str, name: str) -> str:
        path = self.hosts[host].logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        for host in self.hosts.values():
            host.kill()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        deadline = time.monotonic() + 10
        for host in self.hosts.values():
            while host.pids() and time.monotonic() < deadline:
                host.kill()
                time.sleep(0.2)
            _ip("netns", "del", host.netns, check=False)
        _ip("netns", "del", self.switch, check=False)
        self.hosts.clear()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


# --- the FrameLedger roles --------------------------------------------------------------------


def start_db(layout: Layout, host: Host) -> tuple[str, str]:
    """Its own PostgreSQL cluster (initdb as ``postgres`` into the host's private /tmp) and Redis,
    both bound to the host's address only. Returns (DATABASE_URL, REDIS_URL)."""
    pgbin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    script = (
        f"runuser -u postgres -- {pgbin}/initdb -D /tmp/pgdata -A trust -U postgres >/tmp/initdb.log && "
        f"echo 'host all all {SUBNET}.0/24 trust' >> /tmp/pgdata/pg_hba.conf && "
        f"exec runuser -u postgres -- {pgbin}/postgres -D /tmp/pgdata -k /tmp "
        f"-c listen_addresses={host.address} -c max_connections=300 -c fsync=off"
    )
    layout.spawn(host, "postgres", ["sh", "-c", script], dict(os.environ))
    layout.spawn(
        host,
        "redis",
        [
            "redis-server",
            "--bind",
            host.address,
            "--port",
            "6379",
            "--protected-mode",
            "no",
            "--save",
            "",
            "--dir",
            "/tmp",
        ],
        dict(os.environ),
    )
    probe = (
        "import sys, time, psycopg, redis\n"
        "for _ in range(120):\n"
        "    try:\n"
        "        psycopg.connect(sys.argv[1], connect_timeout=2).close()\n"
        "        redis.Redis.from_url(sys.argv[2]).ping()\n"
        "        break\n"
        "    except Exception: time.sleep(0.5)\n"
        "else: sys.exit('the db host did not come up')\n"
    )
    admin = f"postgres://postgres@{host.address}:5432/postgres"
    redis_url = f"redis://{host.address}:6379/0"
    layout.run(host, [sys.executable, "-c", probe, admin, redis_url], dict(os.environ), timeout=90)
    create = f"import psycopg; psycopg.connect({admin!r}, autocommit=True).execute('CREATE DATABASE frameledger')"
    layout.run(host, [sys.executable, "-c", create], dict(os.environ))
    return f"postgres://postgres@{host.address}:5432/frameledger", redis_url


def app_env(layout: Layout, database_url: str, redis_url: str, nginx: str, **extra: str) -> dict:
    """The same environment on every application host, as the compose file's x-env."""
    secret = layout.dir / "secret_key"
    if not secret.exists():
        secret.write_text(secrets.token_urlsafe(50))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_", "FRAMELEDGER_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="deploy.settings",
        DJANGO_SECRET_KEY_FILE=str(secret),
        # one audit signing key for every host (each host's var/ is its own)
        FRAMELEDGER_SIGNING_KEY_FILE=str(shared_signing_key(layout.dir / "signing_key")),
        DJANGO_DEBUG="0",
        DJANGO_ALLOWED_HOSTS=nginx,
        DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto:https",
        DATABASE_URL=database_url,
        DATABASE_POOL_SIZE="4",
        REDIS_URL=redis_url,
        FRAMELEDGER_VAR_DIR=str(ROOT / "var"),
        FRAMELEDGER_MEDIA_ROOT=str(ROOT / "var/media"),
        FRAMELEDGER_MEDIA_ACCEL_PREFIX="/_media/",
        FRAMELEDGER_INGEST_QUEUE="ingest",
        FRAMELEDGER_SCORING_QUEUE="scoring",
        FRAMELEDGER_RETRIEVAL_QUEUE="retrieval",
        PROMETHEUS_MULTIPROC_DIR="/tmp/frameledger-metrics",
        FORWARDED_ALLOW_IPS=nginx,
        LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


def start_web(layout: Layout, host: Host, env: dict, workers: int = 2) -> None:
    layout.spawn(
        host,
        "web",
        ["sh", "-c", 'mkdir -p "$PROMETHEUS_MULTIPROC_DIR" && exec "$@"', "sh", sys.executable, "-m", "gunicorn"]
        + ["-c", str(ROOT / "deploy/gunicorn.conf.py"), "deploy.asgi:application"],
        {**env, "FRAMELEDGER_BIND": f"{host.address}:8000", "WEB_CONCURRENCY": str(workers)},
    )


def start_nginx(layout: Layout, host: Host, env: dict, upstreams: list[Host]) -> None:
    layout.run(host, [sys.executable, "manage.py", "collectstatic", "--noinput"], env)
    runtime = "/tmp/nginx"
    conf = layout.run(
        host,
        ["sh", "-c", f"mkdir -p {runtime} && exec {sys.executable} -m deploy.nginx"],
        {
            **env,
            "FRAMELEDGER_NGINX_LISTEN": f"{host.address}:80",
            "FRAMELEDGER_NGINX_UPSTREAMS": ",".join(f"{u.address}:8000" for u in upstreams),
            "FRAMELEDGER_NGINX_RUNTIME_DIR": runtime,
        },
    )
    (host.dir / "var/nginx.conf").write_text("user root;\n" + conf)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    layout.spawn(
        host,
        "nginx",
        [
            "sh",
            "-c",
            f"mkdir -p {runtime} && exec {nginx} -c {ROOT}/var/nginx.conf -e {runtime}/error.log -g 'daemon off;'",
        ],
        env,
    )


def start_worker(layout: Layout, host: Host, env: dict, queues: str, name: str, concurrency: int = 1) -> None:
    layout.spawn(
        host,
        f"worker-{name}",
        [sys.executable, "-m", "celery", "-A", "deploy", "worker", "-Q", queues, "-n", f"{name}@{host.name}"]
        + [f"--concurrency={concurrency}", "--loglevel=INFO", "--without-gossip", "--without-mingle"],
        {**env, "FRAMELEDGER_WORKER_METRICS_BIND": f"{host.address}:9100"},
    )


def start_beat(layout: Layout, host: Host, env: dict) -> None:
    layout.spawn(host, "beat", [sys.executable, "-m", "celery", "-A", "deploy", "beat", "--loglevel=INFO"], env)


def fetch(layout: Layout, client: Host, url: str) -> str:
    code = (
        "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode())"
    )
    return layout.run(client, [sys.executable, "-c", code, url], dict(os.environ), timeout=60)


def wait_http(layout: Layout, client: Host, url: str, timeout: float = 120) -> None:
    code = (
        "import sys, time, urllib.request\n"
        f"deadline = time.monotonic() + {timeout}\n"
        "while True:\n"
        "    try:\n"
        "        urllib.request.urlopen(sys.argv[1], timeout=5).read(); break\n"
        "    except Exception as exc:\n"
        "        if time.monotonic() > deadline: sys.exit(f'{sys.argv[1]} not up: {exc}')\n"
        "        time.sleep(0.5)\n"
    )
    layout.run(client, [sys.executable, "-c", code, url], dict(os.environ), timeout=timeout + 30)


def start_bundles_worker(layout: Layout, host: Host, env: dict) -> None:
    """The bundles queue as root (as ``worker-bundles`` in the compose file), its jobs folder
    under the host's own ``var/`` (``FRAMELEDGER_SANDBOX_DIR``): no other host sees it."""
    (host.dir / "var/sandbox").mkdir(mode=0o700, parents=True, exist_ok=True)
    bundles_env = {**env, "FRAMELEDGER_SANDBOX_DIR": str(ROOT / "var/sandbox")}
    start_worker(layout, host, bundles_env, env.get("FRAMELEDGER_BUNDLE_QUEUE", "frameledger-bundles"), "bundles")


# A moment-query version with synthetic frame features written into the (shared) media by the
# host that runs it: the reference bundle's corpus reads them on the bundles host.
MOMENT_VERSION = (
    "import json, django; django.setup()\n"
    "from pathlib import Path\n"
    "from django.conf import settings\n"
    "from django.contrib.auth import get_user_model\n"
    "from tests.grading.test_bundles import synthetic_version\n"
    "names = ('maintainer', 'annotator_a', 'annotator_b', 'adjudicator')\n"
    "users = [get_user_model().objects.get(username=n) for n in names]\n"
    "version, features = synthetic_version(*users, Path(settings.MEDIA_ROOT))\n"
    "print(json.dumps({'version': version.pk, 'features': str(features)}))\n"
)


def moment_version(layout: Layout, host: Host, env: dict) -> dict:
    import json

    return json.loads(layout.run(host, [sys.executable, "-c", MOMENT_VERSION], env).strip().splitlines()[-1])
