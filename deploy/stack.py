"""Run the production topology on one machine (``bin/run-stack`` prepares, then runs this).

Processes, all children of this one:

- ``nginx`` in front (``deploy/nginx.py`` renders its configuration into the stack folder);
- ``gunicorn`` with ``--web-workers`` uvicorn worker processes (``deploy/gunicorn.conf.py``);
- one Celery worker per queue: the default queue, ingest, scoring, retrieval, bundles
  (and ``gpu`` with ``--gpu``), and one Celery beat (the sweeps).

Every process that dies is started again after a second (the web master and nginx once
their ports are free), so a killed worker's unacknowledged task is redelivered to its
successor and a killed web master comes back; a process that dies ``CRASH_LOOP`` times
within a minute stops the stack instead. Every child asks the kernel for SIGTERM when this
process exits, however it ends, and gunicorn's workers for SIGTERM when their master exits
(``deploy/pdeathsig.py``): no orphan keeps a port. A start first checks that both ports are
free (another stack, or the orphans of an older one, would answer in its place), and "up"
means ``/readyz`` answered through nginx with this start's own token
(``X-FrameLedger-Instance``), not merely that something answered.

``SIGINT`` (Ctrl-C) or ``SIGTERM`` stops everything cleanly: Celery workers get a warm
shutdown (the running task finishes or, past the grace period, is redelivered later),
gunicorn finishes its requests, nginx quits gracefully. ``<dir>/stack.json`` lists the
processes and ports while the stack runs.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from deploy.pdeathsig import die_with_parent

ROOT = Path(__file__).resolve().parent.parent
STOP_GRACE_SECONDS = 30
PORT_WAIT_SECONDS = 45  # a dead master's workers finish (graceful timeout 30 s) and free the port
CRASH_LOOP = 5  # deaths of one process within CRASH_WINDOW seconds that stop the stack
CRASH_WINDOW = 60.0
INSTANCE_HEADER = "X-FrameLedger-Instance"


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Is something listening on (or bound to) ``host:port``? Tried by binding it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed socket in TIME_WAIT is free
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def end_group(pgid: int, seconds: float = 10.0) -> None:
    """SIGTERM what is left of a process group (a dead parent's children), then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)


def wait_port_free(port: int, seconds: float = PORT_WAIT_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while port_in_use(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def queues(gpu: bool) -> dict[str, str]:
    """Worker name -> queue (from the same variables the settings read)."""
    env = os.environ
    table = {
        "default": env.get("CELERY_QUEUE", "frameledger"),
        "ingest": env["FRAMELEDGER_INGEST_QUEUE"],
        "scoring": env["FRAMELEDGER_SCORING_QUEUE"],
        "retrieval": env["FRAMELEDGER_RETRIEVAL_QUEUE"],
        "bundles": env.get("FRAMELEDGER_BUNDLE_QUEUE", "frameledger-bundles"),
    }
    if gpu:
        table["gpu"] = env.get("FRAMELEDGER_BUNDLE_GPU_QUEUE", "gpu")
    return table


class Stack:
    def __init__(self, args):
        self.args = args
        self.dir = Path(args.dir).resolve()
        self.logs = self.dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.envs: dict[str, dict] = {}
        self.restarts: dict[str, int] = {}
        self.deaths: dict[str, list[float]] = {}
        self.stopping = False
        self.instance = secrets.token_hex(12)

    def start(self, name: str, command: list[str], env: dict | None = None) -> None:
        self.commands[name] = command
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - kept open by the child
        self.envs[name] = env or {}
        self.procs[name] = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # its own process group: what it leaves behind is ended with it
            preexec_fn=die_with_parent,  # noqa: PLW1509 - this process starts no threads
        )
        log.close()

    def write_state(self) -> None:
        state = {
            "port": self.args.port,
            "web_port": self.args.web_port,
            "pid": os.getpid(),
            "processes": {name: proc.pid for name, proc in self.procs.items()},
            "restarts": self.restarts,
        }
        tmp = self.dir / "stack.json.tmp"
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.dir / "stack.json")

    def run(self) -> int:
        args = self.args
        py = sys.executable
        busy = [port for port in (args.port, args.web_port) if port_in_use(port)]
        if busy:
            print(
                f"port {', '.join(map(str, busy))} of 127.0.0.1 is in use by another process (another stack, or "
                "what an earlier one left running); stop it, or choose other ports (--port, --web-port)",
                file=sys.stderr,
                flush=True,
            )
            return 1
        nginx_conf = self.dir / "nginx.conf"
        runtime = self.dir / "nginx"
        runtime.mkdir(exist_ok=True)
        rendered = subprocess.run(
            [py, "-m", "deploy.nginx"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "FRAMELEDGER_NGINX_LISTEN": f"127.0.0.1:{args.port}",
                "FRAMELEDGER_NGINX_UPSTREAMS": f"127.0.0.1:{args.web_port}",
                "FRAMELEDGER_NGINX_RUNTIME_DIR": str(runtime),
            },
        ).stdout
        if os.geteuid() == 0:  # nginx's workers read the static and media folders as this user
            rendered = "user root;\n" + rendered
        nginx_conf.write_text(rendered)
        self.start(
            "web",
            [py, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"), "deploy.asgi:application"],
            {
                "FRAMELEDGER_BIND": f"127.0.0.1:{args.web_port}",
                "WEB_CONCURRENCY": str(args.web_workers),
                "FRAMELEDGER_INSTANCE": self.instance,
            },
        )
        for name, queue in queues(args.gpu).items():
            self.start(
                f"worker-{name}",
                [
                    py,
                    "-m",
                    "celery",
                    "-A",
                    "deploy",
                    "worker",
                    "--pool=solo",
                    "-Q",
                    queue,
                    "-n",
                    f"{name}@%h",
                    "--loglevel=INFO",
                    "--without-gossip",
                    "--without-mingle",
                ],
            )
        # One beat for the stack: the periodic sweeps (ingest chunks, scoring batches, derived jobs, bundles).
        self.start(
            "worker-beat",
            [py, "-m", "celery", "-A", "deploy", "beat", "--loglevel=INFO"]
            + ["-s", str(self.dir / "celerybeat-schedule")],
        )
        self.start("nginx", ["nginx", "-c", str(nginx_conf), "-e", str(runtime / "error.log"), "-g", "daemon off;"])
        self.write_state()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.on_signal)
        ready = self.wait_ready()
        if ready:
            print(f"FrameLedger stack on http://127.0.0.1:{args.port}/ (logs: {self.logs})", flush=True)
        else:
            print("the stack did not become ready; see the logs in " + str(self.logs), file=sys.stderr, flush=True)
            self.stop()
            return 1
        while not self.stopping:
            for name, proc in list(self.procs.items()):
                if proc.poll() is None or self.stopping:
                    continue
                if not self.restart(name, proc.returncode):
                    self.stop()
                    return 1
            time.sleep(0.5)
        self.stop()
        return 0

    def restart(self, name: str, returncode: int | None) -> bool:
        """Start a dead process again (the web master and nginx once their port is free);
        False when it is crash-looping or its port stays taken."""
        now = time.monotonic()
        deaths = [t for t in self.deaths.get(name, []) if now - t < CRASH_WINDOW] + [now]
        self.deaths[name] = deaths
        if len(deaths) >= CRASH_LOOP:
            print(
                f"{name} exited ({returncode}) {len(deaths)} times within {CRASH_WINDOW:.0f} s; stopping the stack",
                file=sys.stderr,
                flush=True,
            )
            return False
        print(f"{name} exited ({returncode}); starting it again", flush=True)
        end_group(self.procs[name].pid)  # its own children (web workers, nginx workers), if any are left
        port = {"web": self.args.web_port, "nginx": self.args.port}.get(name)
        if port is not None and not wait_port_free(port):
            print(f"port {port} stayed in use after {name} exited; stopping the stack", file=sys.stderr, flush=True)
            return False
        time.sleep(1)
        self.restarts[name] = self.restarts.get(name, 0) + 1
        self.start(name, self.commands[name], self.envs.get(name))
        self.write_state()
        return True

    def wait_ready(self, timeout: float = 120.0) -> bool:
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.args.port}/readyz"
        while time.monotonic() < deadline and not self.stopping:
            if any(p.poll() is not None for n, p in self.procs.items() if not n.startswith("worker-")):
                return False
            try:
                with urllib.request.urlopen(url, timeout=3) as response:
                    if response.status == 200 and response.headers.get(INSTANCE_HEADER) == self.instance:
                        return True
            except OSError:
                pass
            time.sleep(0.5)
        return False

    def on_signal(self, signum, frame):
        self.stopping = True

    def stop(self) -> None:
        self.stopping = True
        order = [n for n in self.procs if n.startswith("worker-")] + ["web", "nginx"]
        for name in order:
            proc = self.procs.get(name)
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGQUIT if name == "nginx" else signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for name in order:
            proc = self.procs.get(name)
            if proc is None:
                continue
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"{name} did not stop in {STOP_GRACE_SECONDS} s; killed", file=sys.stderr, flush=True)
                proc.kill()
                proc.wait()
        for proc in self.procs.values():  # nothing of any process group outlives the stack
            end_group(proc.pid, seconds=2.0)
        (self.dir / "stack.json").unlink(missing_ok=True)
        print("FrameLedger stack stopped", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run the production topology on one machine.")
    parser.add_argument("--port", type=int, default=int(os.environ.get("STACK_PORT", "8080")))
    parser.add_argument("--web-port", type=int, default=int(os.environ.get("STACK_WEB_PORT", "8081")))
    parser.add_argument("--web-workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")))
    parser.add_argument("--dir", default=os.environ.get("STACK_DIR", str(ROOT / "var" / "stack")))
    parser.add_argument("--gpu", action="store_true", help="also a worker for the gpu queue (a CUDA host)")
    return Stack(parser.parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
