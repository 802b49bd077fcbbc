"""A long upload through the embedded default, measured from outside (issue 27's figures).

Runs the embedded default as ``bin/run-demo`` does (``python -m deploy.serve``: uvicorn; a
Celery worker, solo, with beat) on a fresh SQLite database and media folder under a
temporary ``FRAMELEDGER_VAR_DIR``, on a generated file of the seed's shape
(``bench/seed_source.py``: 1280x720, 30000/1001 fps, ~770 kbit/s H.264 High + stereo AAC,
every frame barcoded), and prints:

1. server RSS (idle, peak, after) during the HTTP upload, both ways: one multipart
   ``POST /api/videos/`` (what scripts do) and the page's resumable tus upload in 8 MiB
   pieces; and an anonymous upload of the same size (refused from the head);
2. time to annotatable (remux) and to the full proxy, with the load average;
3. disk: media after ingest and at its peak vs the source; proxy bit rate vs the source's;
4. N seeks by a raw client doing what a ``<video>`` does (``Range: bytes=X-`` at a random
   offset, read what a GOP needs, drop the connection): bytes the client read vs bytes the
   server's access log says it sent, and server RSS after.

    .venv/bin/python bench/large_upload.py --minutes 10 [--seeks 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from seed_source import seed_source  # noqa: E402

from tests.http.live_server import free_port, read_response, wait_for_port  # noqa: E402

MB = 1e6
MIB = 1024 * 1024
PIECE = 8 * MIB


def status_of(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmRSS", "VmHWM"}:
            fields[name] = int(value.split()[0]) * 1024
    return fields


class RssSampler:
    """Peak resident memory of a process, sampled every 50 ms while active."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, status_of(self.pid)["VmRSS"])
            except (FileNotFoundError, KeyError):
                return
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def disk_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


class Demo:
    """The embedded default on a fresh var folder: migrate, a maintainer with a token,
    ``python -m deploy.serve`` and (when asked) one Celery worker with beat."""

    def __init__(self, var: Path):
        self.var = var
        self.port = free_port()
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

    def setup(self) -> str:
        self.manage("migrate", "--noinput")
        script = (
            "from django.contrib.auth.models import Group, User;"
            "from annotator.actions.tokens import do_issue_token;"
            "u = User.objects.create_user('bench', password='x');"
            "u.groups.add(Group.objects.get_or_create(name='maintainers')[0]);"
            "from django.test import Client; c = Client(); c.force_login(u);"
            "print(do_issue_token(u)[1], c.cookies['sessionid'].value)"
        )
        token, session = self.manage("shell", "-c", script).strip().splitlines()[-1].split()
        return token, session

    def start_server(self):
        command = [sys.executable, "-m", "deploy.serve", "-b", "127.0.0.1", "-p", str(self.port)]
        self.server_log = open(self.var / "server.log", "w")  # noqa: SIM115
        self.server = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.server_log, stderr=subprocess.STDOUT
        )
        wait_for_port(self.port, self.server)

    def start_worker(self):
        command = [str(ROOT / ".venv/bin/celery"), "-A", "deploy", "worker", "-B", "--loglevel=INFO", "--pool=solo",
                   "--concurrency=1", "-Q", "frameledger,frameledger-bundles"]  # fmt: skip
        self.worker_log = open(self.var / "worker.log", "w")  # noqa: SIM115
        self.worker = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.worker_log, stderr=subprocess.STDOUT
        )

    def stop(self):
        for process in (self.worker, self.server):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()


def request(port: int, method: str, path: str, headers: dict, body: bytes = b"") -> tuple[int, dict, bytes]:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *[f"{k}: {v}" for k, v in headers.items()]]
    if body or method in {"POST", "PATCH"}:
        lines.append(f"Content-Length: {len(body)}")
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        response = read_response(sock, timeout=600)
    head, _, content = response.partition(b"\r\n\r\n")
    first, *rest = head.decode("latin-1").split("\r\n")
    fields = {n.strip().lower(): v.strip() for n, _, v in (line.partition(":") for line in rest)}
    return int(first.split()[1]), fields, content


def multipart_upload(port: int, token: str, path: Path, title: str, *, auth: bool = True) -> tuple[int, bytes, float]:
    boundary = secrets.token_hex(12)
    start = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\n{title}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
        "Content-Type: video/mp4\r\n\r\n"
    ).encode()
    end = f"\r\n--{boundary}--\r\n".encode()
    length = len(start) + path.stat().st_size + len(end)
    headers = [f"Content-Type: multipart/form-data; boundary={boundary}", f"Content-Length: {length}"]
    if auth:
        headers.append(f"Authorization: Token {token}")
    head = "\r\n".join(["POST /api/videos/ HTTP/1.1", "Host: 127.0.0.1", *headers]) + "\r\n\r\n"
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode() + start)
        try:
            with open(path, "rb") as fh:
                while block := fh.read(MIB):
                    sock.sendall(block)
            sock.sendall(end)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused from the head: the server closed
        response = read_response(sock, timeout=600)
    return int(response.split(b" ", 2)[1]), response.partition(b"\r\n\r\n")[2], time.monotonic() - started


def tus_upload(port: int, token: str, path: Path, title: str) -> tuple[dict, float]:
    import base64

    auth = {"Authorization": f"Token {token}", "Tus-Resumable": "1.0.0"}
    meta = ",".join(
        f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in (("filename", path.name), ("title", title))
    )
    size = path.stat().st_size
    started = time.monotonic()
    status, fields, body = request(
        port, "POST", "/api/uploads/", {**auth, "Upload-Length": size, "Upload-Metadata": meta}
    )
    assert status == 201, body
    url, offset = fields["location"], 0
    with open(path, "rb") as fh:
        while offset < size:
            piece = fh.read(PIECE)
            headers = {**auth, "Upload-Offset": offset, "Content-Type": "application/offset+octet-stream"}
            status, fields, body = request(port, "PATCH", url, headers, piece)
            assert status == 204, body
            offset = int(fields["upload-offset"])
    status, _, body = request(port, "GET", url, auth)
    return json.loads(body), time.monotonic() - started


def wait_ingest(port: int, token: str, video_id: int, load: list[float]) -> dict:
    auth = {"Authorization": f"Token {token}"}
    started = time.monotonic()
    marks = {}
    while True:
        _, _, body = request(port, "GET", f"/api/videos/{video_id}/", auth)
        video = json.loads(body)
        job = video.get("job") or {}
        load.append(os.getloadavg()[0])
        if video["ready_for_annotation"] and "annotatable" not in marks:
            marks["annotatable"] = time.monotonic() - started
        if job.get("status") in ("done", "failed"):
            marks["proxy"] = time.monotonic() - started
            marks["video"], marks["job"] = video, job
            return marks
        time.sleep(0.5)


def seek_test(port: int, cookie_headers: dict, url: str, size: int, seeks: int, need: int) -> tuple[int, float]:
    """``seeks`` open-ended ranges at random offsets; each reads ``need`` bytes and drops."""
    rng = random.Random(7)
    read = 0
    started = time.monotonic()
    for _ in range(seeks):
        offset = rng.randrange(0, max(1, size - need))
        head = "\r\n".join(
            [f"GET {url} HTTP/1.1", "Host: 127.0.0.1", f"Range: bytes={offset}-",
             *[f"{k}: {v}" for k, v in cookie_headers.items()]]
        ) + "\r\n\r\n"  # fmt: skip
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            body = len(data.partition(b"\r\n\r\n")[2])
            while body < need:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += len(chunk)
            read += body
    return read, time.monotonic() - started


def access_log_bytes(log: Path, pattern: str) -> tuple[int, int]:
    total, count = 0, 0
    for line in log.read_text(errors="replace").splitlines():
        if "frameledger.access" in line and pattern in line:
            match = re.search(r"sent=(\d+)", line)
            if match:
                total += int(match.group(1))
                count += 1
    return total, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the generated source")
    parser.add_argument("--seeks", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary var folder")
    args = parser.parse_args()
    source = seed_source(args.minutes)
    from annotator.base.media.probe import probe

    probed = probe(source)
    size = source.stat().st_size
    print(f"source: {source.name}, {size / MB:.1f} MB, {probed.frame_count} frames, "
          f"video {probed.bit_rate / 1000:.0f} kbit/s, {args.minutes:g} min", flush=True)  # fmt: skip
    var = Path(tempfile.mkdtemp(prefix="fl-large-", dir=ROOT / "var"))
    demo = Demo(var)
    try:
        token, session = demo.setup()
        demo.start_server()
        pid = demo.server.pid
        time.sleep(2)
        idle = status_of(pid)["VmRSS"]
        print(
            f"server idle RSS {idle / MIB:.0f} MiB; load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True
        )

        with RssSampler(pid) as sampler:
            status, body, seconds = multipart_upload(demo.port, token, source, "anonymous", auth=False)
        print(f"[1] anonymous multipart {size / MB:.0f} MB: {status} {body[:80]!r} in {seconds:.2f} s; "
              f"server RSS peak +{(sampler.peak - idle) / MIB:.0f} MiB", flush=True)  # fmt: skip

        with RssSampler(pid) as sampler:
            answer, seconds = tus_upload(demo.port, token, source, "tus")
        tus_video = answer["video"]["id"]
        print(f"[1] tus upload (8 MiB pieces): {seconds:.1f} s ({size / MB / seconds:.0f} MB/s); server RSS peak "
              f"+{(sampler.peak - idle) / MIB:.0f} MiB above idle, after {status_of(pid)['VmRSS'] / MIB:.0f} MiB",
              flush=True)  # fmt: skip
        status, _, _ = request(demo.port, "DELETE", f"/api/videos/{tus_video}/", {"Authorization": f"Token {token}"})
        assert status == 204, status  # its ingest never ran: only the multipart upload is ingested

        media = var / "media"
        base = disk_bytes(media)
        with RssSampler(pid) as sampler:
            status, body, seconds = multipart_upload(demo.port, token, source, "multipart")
        assert status == 202, body[:300]
        video_id = json.loads(body)["video"]["id"]
        print(f"[1] multipart POST /api/videos/: {status} in {seconds:.1f} s; server RSS peak "
              f"+{(sampler.peak - idle) / MIB:.0f} MiB above idle, after {status_of(pid)['VmRSS'] / MIB:.0f} MiB",
              flush=True)  # fmt: skip

        load: list[float] = []
        peak_disk = [disk_bytes(media) - base]
        stop = threading.Event()

        def watch_disk():
            while not stop.is_set():
                peak_disk.append(disk_bytes(media) - base)
                time.sleep(1.0)

        watcher = threading.Thread(target=watch_disk, daemon=True)
        watcher.start()
        demo.start_worker()
        marks = wait_ingest(demo.port, token, video_id, load)
        stop.set()
        watcher.join()
        job = marks["job"]
        assert job["status"] == "done", job
        after = disk_bytes(media) - base
        print(f"[2] annotatable {marks.get('annotatable', float('nan')):.1f} s after the worker started, full proxy "
              f"{marks['proxy']:.1f} s ({probed.duration / marks['proxy']:.2f}x real time); load average mean "
              f"{sum(load) / len(load):.2f}, max {max(load):.2f}", flush=True)  # fmt: skip
        proxy_path = media / json.loads(demo.manage("shell", "-c", (
            f"import json; from annotator.models import Video; v = Video.objects.get(pk={video_id}); "
            "print(json.dumps(v.proxy.name))")).strip().splitlines()[-1])  # fmt: skip
        proxy_size = proxy_path.stat().st_size
        proxy_kbps = proxy_size * 8 / probed.duration / 1000
        peak = max(peak_disk)
        print(f"[3] media after ingest {after / MB:.0f} MB ({after / size:.2f}x the source), peak {peak / MB:.0f}"
              f" MB ({peak / size:.2f}x); proxy {proxy_size / MB:.0f} MB, {proxy_kbps:.0f} kbit/s vs the "
              f"source's video {probed.bit_rate / 1000:.0f} kbit/s ({proxy_kbps * 1000 / probed.bit_rate:.2f}x)",
              flush=True)  # fmt: skip

        deadline = time.monotonic() + 90  # the sweep (every 10 s here) drops the remux 5 s after the proxy
        while time.monotonic() < deadline and list((media / "videos" / "remux").glob("*")):
            time.sleep(1.0)
        dropped = disk_bytes(media) - base
        print(f"[3] media once the remux is dropped: {dropped / MB:.0f} MB ({dropped / size:.2f}x the source)")

        before_seeks = status_of(pid)["VmRSS"]
        log = var / "server.log"
        sent_before, _ = access_log_bytes(log, "/media/videos/")
        url = f"/media/videos/{video_id}/proxy.mp4"
        need = 512 * 1024  # a GOP of 12 frames at this rate is ~40 KB; a player reads ahead more
        read, seconds = seek_test(demo.port, {"Cookie": f"sessionid={session}"}, url, proxy_size, args.seeks, need)
        time.sleep(1.0)
        sent, count = access_log_bytes(log, "/media/videos/")
        sent -= sent_before
        print(f"[4] {args.seeks} seeks (Range: bytes=X-, read {need // 1024} KiB, drop): client read "
              f"{read / MB:.0f} MB, server logged {sent / MB:.0f} MB over {count} requests "
              f"({sent / max(read, 1):.2f}x); "
              f"{seconds:.1f} s; server RSS {before_seeks / MIB:.0f} -> {status_of(pid)['VmRSS'] / MIB:.0f} MiB",
              flush=True)  # fmt: skip
    finally:
        demo.stop()
        if not args.keep:
            import shutil

            shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
