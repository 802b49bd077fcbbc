"""The production image built and run on one machine with podman (``bin/run-image``; docs/deploy.md,
"The image built and run here").

    python -m deploy.image base       # the local bookworm + Python 3.11 base (mmdebstrap), if missing
    python -m deploy.image build      # podman build of the repository's Dockerfile on that base
    python -m deploy.image up         # every service of deploy/compose.yaml from the image
    python -m deploy.image smoke      # the protocol through nginx (deploy/image_smoke.py)
    python -m deploy.image privileges # the bundles service's privileges, each taken away (deploy/image_privileges.py)
    python -m deploy.image down       # stop and remove the containers
    python -m deploy.image all        # base, build, up, smoke; down at the end (--keep: leave it up)

The services are read from ``deploy/compose.yaml`` (each one's command, user, privileges and
environment), so the drill runs what the compose file says rather than a copy of it. This is a
small driver and not podman-compose or ``podman kube play`` on purpose: both give every service a
network namespace of its own and name the others by DNS (``postgres``, ``redis``, ``web``), where
this drill runs against the host's PostgreSQL and Redis with host networking only, every service
reaching the others and the client through 127.0.0.1. So a few settings are the local host's
(``LOCAL_ENV`` below: addresses, plain HTTP on one port, a worker metrics port each), and the
database, media and secret are this machine's; what a real container host changes is in the docs.

Containers run with the ``runc`` runtime (``crun`` refuses this host's cgroup layout) and with the
host's hard limits for open files and a process cap (podman's default asks for more than this
host allows); both are in a ``containers.conf`` written beside the state (``CONTAINERS_CONF``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from deploy.keys import shared_signing_key

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "localhost/frameledger:latest"
BASE = "localhost/frameledger-base:bookworm-py311"
BASE_PACKAGES = ("python3.11", "python3.11-venv", "python-is-python3", "ca-certificates")
PREFIX = "frameledger-image-"
SERVICE_UID = 10001  # the image's `frameledger` user (Dockerfile)
METRICS_PORT = 9301  # + the service's place in ORDER: each worker's own metrics port
# Started in this order; migrate runs to its end first. worker-gpu needs a CUDA host.
ORDER = [
    "web",
    "nginx",
    "worker-default",
    "worker-ingest",
    "worker-scoring",
    "worker-retrieval",
    "beat",
    "worker-bundles",
]


# What the drill does with each field of a compose service: applied as podman arguments, or left
# out here for the reason given. ``up`` refuses a service with any other field rather than run it
# without what that field says.
APPLIED = ("command", "user", "privileged", "cap_drop", "cap_add", "devices", "security_opt", "cgroup",
           "volumes", "environment")  # fmt: skip
NOT_HERE = {
    "build": "the image is built once (Drill.build) and every service runs it",
    "image": "the image is built once (Drill.build) and every service runs it",
    "secrets": "the secret key and the signing key are mounted from the drill's state folder",
    "healthcheck": "the drill waits for /readyz itself (Drill.wait_ready)",
    "deploy": "one machine: placement, replicas and restart policies are a real host's",
    "ports": "host networking: nginx listens on the drill's own port",
}


VOLUMES = ("media", "bundle-jobs")  # each a folder of the drill's state


def not_applied(service: dict) -> list[str]:
    """What of ``service`` the drill cannot apply: fields it does not know, volumes it has no
    folder for ('' for none)."""
    fields = sorted(set(service) - set(APPLIED) - set(NOT_HERE))
    volumes = [v for v in service.get("volumes", []) if str(v).split(":", 1)[0] not in VOLUMES]
    return fields + [f"volume {v}" for v in volumes]


class Drill:
    def __init__(self, state: Path, port: int, web_port: int, database_url: str, redis_url: str):
        self.state, self.port, self.web_port = state, port, web_port
        self.database_url, self.redis_url = database_url, redis_url
        self.compose = yaml.safe_load((ROOT / "deploy/compose.yaml").read_text())
        self.base = f"http://127.0.0.1:{port}"

    # ---- podman ------------------------------------------------------------------------------
    def podman(self, *args: str, check: bool = True, capture: bool = False, timeout: float | None = None):
        env = {**os.environ, "CONTAINERS_CONF": str(self.containers_conf())}
        return subprocess.run(
            ["podman", *args], env=env, check=check, text=True, capture_output=capture, timeout=timeout
        )

    def containers_conf(self) -> Path:
        path = self.state / "containers.conf"
        if not path.exists():
            self.state.mkdir(parents=True, exist_ok=True)
            nofile = subprocess.run(["sh", "-c", "ulimit -Hn"], capture_output=True, text=True).stdout.strip()
            path.write_text(
                "[containers]\n"
                f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc=4096:4096"]\n'
                "[engine]\n"
                'runtime = "runc"\n'
            )
        return path

    def image_exists(self, name: str) -> bool:
        return self.podman("image", "exists", name, check=False).returncode == 0

    # ---- base and build ----------------------------------------------------------------------
    def make_base(self) -> dict:
        """Debian bookworm (minbase) with Python 3.11, its venv module and a ``python`` command,
        as the official image has: the bundle sandbox gives bundles the worker's interpreter,
        and bundles call ``python``."""
        if self.image_exists(BASE):
            return {"base": BASE, "made": False}
        started = time.monotonic()
        tarball = self.state / "base.tar"
        subprocess.run(
            ["mmdebstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", "bookworm", str(tarball)],
            check=True,
        )  # fmt: skip
        self.podman("import", "--change", 'CMD ["python3.11"]', str(tarball), BASE)
        tarball.unlink()
        return {"base": BASE, "made": True, "seconds": round(time.monotonic() - started, 1)}

    def build(self) -> dict:
        started = time.monotonic()
        args = ["build", "--network", "host", "--build-arg", f"BASE={BASE}", "-t", IMAGE]
        wheels = Path("/opt/wheels")  # this machine's CPU torch wheel: no torch index is reachable
        if wheels.is_dir():
            args += [
                "-v",
                f"{wheels}:{wheels}:ro",
                "--build-arg",
                "TORCH_INDEX=",
                "--build-arg",
                f"PIP_FIND_LINKS={wheels}",
            ]
        ca = Path("/etc/ssl/certs/ca-certificates.crt")  # the host's CAs, its proxy's included
        if ca.is_file():
            args += ["-v", f"{ca}:/run/build-ca.crt:ro", "--build-arg", "PIP_CERT=/run/build-ca.crt"]
        self.state.mkdir(parents=True, exist_ok=True)
        log = self.state / "build.log"
        with open(log, "w") as out:
            done = subprocess.run(
                ["podman", *args, str(ROOT)],
                env={**os.environ, "CONTAINERS_CONF": str(self.containers_conf())},
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
        tail = log.read_text(errors="replace").splitlines()[-15:]
        if done.returncode != 0:
            raise SystemExit("podman build failed; the end of its log:\n" + "\n".join(tail))
        size = self.podman("image", "inspect", IMAGE, "--format", "{{.Size}}", capture=True).stdout.strip()
        return {"image": IMAGE, "seconds": round(time.monotonic() - started, 1), "bytes": int(size), "log_tail": tail}

    # ---- services ----------------------------------------------------------------------------
    def local_env(self) -> dict:
        """The compose file's environment with this machine's addresses (see the module docstring)."""
        return {k: str(v) for k, v in {**self.compose["x-env"], **self.local_overrides()}.items()}

    def local_overrides(self) -> dict:
        """What this machine changes in every service's environment: a real host's names,
        TLS and private network replaced by loopback addresses and plain HTTP on one port."""
        return {
            k: str(v)
            for k, v in (
                {
                    "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
                    "DJANGO_CSRF_TRUSTED_ORIGINS": self.base,
                    # plain HTTP on a loopback port: no certificate here (a real host keeps these on)
                    "DJANGO_SECURE_COOKIES": "0",
                    "DJANGO_SECURE_SSL_REDIRECT": "0",
                    "DJANGO_SECURE_HSTS_SECONDS": "0",
                    "DATABASE_URL": self.database_url,
                    "DATABASE_POOL_SIZE": "4",
                    "REDIS_URL": self.redis_url,
                    "FRAMELEDGER_METRICS_ALLOW": "127.0.0.1",
                }
            ).items()
        }

    def prepare_state(self) -> None:
        shutil.rmtree(self.state / "media", ignore_errors=True)
        for folder in VOLUMES:
            (self.state / folder).mkdir(parents=True, exist_ok=True)
        os.chown(self.state / "media", SERVICE_UID, SERVICE_UID)
        os.chmod(self.state / "bundle-jobs", 0o700)  # root's: the bundles worker's job folders
        secret = self.state / "django_secret_key"
        if not secret.exists():
            import secrets

            secret.write_text(secrets.token_urlsafe(50) + "\n")
        os.chown(secret, SERVICE_UID, SERVICE_UID)
        os.chmod(secret, 0o400)
        # The audit log's signing key, one for every service (compose: the frameledger_signing_key
        # secret): an entry a worker signs is verified by the web process and the other way round.
        shared_signing_key(self.state / "frameledger_signing_key", owner=SERVICE_UID)

    def run_args(self, name: str, service: dict, env: dict, metrics_port: int | None) -> list[str]:
        args = ["run", "--network", "host", "--name", PREFIX + name]
        if service.get("user"):
            args += ["--user", str(service["user"])]
        unknown = not_applied(service)
        if unknown:
            what = f"deploy/compose.yaml: service {name} has {', '.join(unknown)}"
            raise SystemExit(f"{what}, which the drill does not apply (deploy/image.py, APPLIED): refused, not run")
        if service.get("privileged"):
            args += ["--privileged"]
        args += [f"--cap-drop={cap}" for cap in service.get("cap_drop", [])]
        args += [f"--cap-add={cap}" for cap in service.get("cap_add", [])]
        args += [f"--device={device}" for device in service.get("devices", [])]
        args += [f"--security-opt={option}" for option in service.get("security_opt", [])]
        if service.get("cgroup"):
            args += [f"--cgroupns={service['cgroup']}"]
        for volume in service.get("volumes", []):
            source, target = volume.split(":", 1)
            args += ["-v", f"{self.state / source}:{target}"]
        args += ["-v", f"{self.state / 'django_secret_key'}:/run/secrets/django_secret_key:ro"]
        args += ["-v", f"{self.state / 'frameledger_signing_key'}:/run/secrets/frameledger_signing_key:ro"]
        merged = {**self.local_env(), **{k: str(v) for k, v in service.get("environment", {}).items()}}
        merged.update(self.local_overrides())
        if "FRAMELEDGER_WORKER_METRICS_BIND" in merged:
            if metrics_port:  # one port each: every container shares the host's network
                merged["FRAMELEDGER_WORKER_METRICS_BIND"] = f"127.0.0.1:{metrics_port}"
            else:
                merged.pop("FRAMELEDGER_WORKER_METRICS_BIND")
        merged.update(env)
        for key, value in sorted(merged.items()):
            args += ["-e", f"{key}={value}"]
        return args

    def command(self, name: str, service: dict) -> list[str]:
        if name == "nginx":  # the compose command's TLS and upstream names are a real host's
            return [
                "sh",
                "-c",
                ".venv/bin/python manage.py collectstatic --noinput >/dev/null && mkdir -p var/nginx && "
                f"FRAMELEDGER_NGINX_UPSTREAMS=127.0.0.1:{self.web_port} FRAMELEDGER_NGINX_LISTEN=127.0.0.1:{self.port} "
                "FRAMELEDGER_NGINX_RUNTIME_DIR=/app/var/nginx .venv/bin/python -m deploy.nginx > var/nginx.conf && "
                "exec nginx -c /app/var/nginx.conf -e /app/var/nginx/error.log -g 'daemon off;'",
            ]
        command = [str(part) for part in service["command"]]
        # one process per worker on a two-core machine; the compose file sizes real machines
        return [re.sub(r"^--concurrency=\d+$", "--concurrency=1", part) for part in command]

    def up(self) -> dict:
        self.down(quiet=True)
        self.prepare_state()
        self.create_database()
        services = self.compose["services"]
        unknown = {name: not_applied(services[name]) for name in ["migrate", *ORDER]}
        if any(unknown.values()):  # before anything starts
            raise SystemExit(f"deploy/compose.yaml has what the drill does not apply: {unknown}")
        started = time.monotonic()
        migrate = services["migrate"]
        self.podman(*self.run_args("migrate", migrate, {}, None), "--rm", IMAGE, *migrate["command"])
        for number, name in enumerate(ORDER):
            service = services[name]
            env = {"FRAMELEDGER_BIND": f"127.0.0.1:{self.web_port}", "WEB_CONCURRENCY": "2"} if name == "web" else {}
            metrics = METRICS_PORT + number
            self.podman(*self.run_args(name, service, env, metrics), "-d", IMAGE, *self.command(name, service))
        self.wait_ready()
        return {"seconds_to_ready": round(time.monotonic() - started, 1), "services": self.states()}

    def create_database(self) -> None:
        """The drill's own database, made anew on every ``up`` (its media too: ``prepare_state``)."""
        from urllib.parse import urlparse

        import psycopg

        url = urlparse(self.database_url)
        name = url.path.lstrip("/")
        with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')

    def wait_ready(self, timeout: float = 180) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.base}/readyz", timeout=3).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(1)
        raise SystemExit(f"{self.base}/readyz did not answer 200 within {timeout} s: {json.dumps(self.states())}")

    def states(self) -> dict:
        listed = self.podman("ps", "-a", "--format", "json", capture=True).stdout
        rows = [c for c in json.loads(listed or "[]") if c["Names"][0].startswith(PREFIX)]
        return {c["Names"][0][len(PREFIX) :]: c["State"] for c in rows}

    def exec(self, name: str, *command: str, timeout: float = 600) -> str:
        done = self.podman("exec", PREFIX + name, *command, capture=True, check=False, timeout=timeout)
        if done.returncode != 0:
            raise SystemExit(f"{shlex.join(command)} in {name} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout

    def tasks(self, name: str) -> dict:
        """The tasks a worker container ran, by name, from its own metrics port (each container has
        its own metrics folder, so the counts are that container's alone)."""
        import requests

        port = METRICS_PORT + ORDER.index(name)
        try:
            text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        except requests.RequestException:
            return {}
        found = re.findall(r'frameledger_task_duration_seconds_count\{outcome="(\w+)",task="([\w.]+)"\} ([\d.]+)', text)
        return {f"{task} {outcome}": int(float(count)) for outcome, task, count in found}

    def logs(self, name: str) -> str:
        done = self.podman("logs", PREFIX + name, capture=True, check=False)
        return done.stdout + done.stderr

    def down(self, quiet: bool = False) -> None:
        names = [PREFIX + n for n in ["migrate", *ORDER, "smoke", "bundles-check"]]
        self.podman("rm", "-f", "-t", "20", "--ignore", *names, check=False, capture=quiet)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["base", "build", "up", "smoke", "privileges", "down", "all"])
    parser.add_argument("--state", default=os.environ.get("IMAGE_STATE_DIR", str(ROOT / "var/image")))
    parser.add_argument("--port", type=int, default=int(os.environ.get("IMAGE_PORT", "8180")))
    parser.add_argument("--web-port", type=int, default=int(os.environ.get("IMAGE_WEB_PORT", "8181")))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("IMAGE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/frameledger_image"),
    )
    parser.add_argument("--redis-url", default=os.environ.get("IMAGE_REDIS_URL", "redis://127.0.0.1:6379/12"))
    parser.add_argument("--keep", action="store_true", help="with all: leave the services running")
    args = parser.parse_args(argv)
    if shutil.which("podman") is None:
        raise SystemExit("podman is missing: apt-get install podman runc mmdebstrap (bin/run-image does, as root)")
    drill = Drill(Path(args.state), args.port, args.web_port, args.database_url, args.redis_url)
    report: dict = {}
    if args.step in ("base", "all"):
        report["base"] = drill.make_base()
    if args.step in ("build", "all"):
        report["build"] = drill.build()
    if args.step == "privileges":
        from deploy.image_privileges import privileges

        report["privileges"] = privileges(drill)
    if args.step in ("up", "all"):
        report["up"] = drill.up()
    try:
        if args.step in ("smoke", "all"):
            from deploy.image_smoke import smoke

            report["smoke"] = smoke(drill)
            report["services_after"] = drill.states()
    finally:
        if args.step == "down" or (args.step == "all" and not args.keep):
            drill.down()
    print(json.dumps(report, indent=2))
    return 0 if report.get("smoke", {}).get("ok", True) and report.get("privileges", {}).get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
