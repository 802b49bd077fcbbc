"""A long upload through a real server, measured from outside (issue 27's figures).

Runs the embedded default as ``bin/run-demo`` does, ``bin/run-stack`` (the production
topology), or both one after the other on the same source (``bench/upload_targets.py``),
each on a fresh database and media folder, with a generated file of the seed's shape
(``bench/seed_source.py``: 1280x720, 30000/1001 fps, ~770 kbit/s H.264 High + stereo AAC,
every frame barcoded), and prints for each:

1. server RSS (idle, peak, after) during the HTTP upload: an anonymous upload of the same
   size (refused from the head); the page's resumable tus upload in 8 MiB pieces (the video
   that is then ingested); at the end, one multipart ``POST /api/videos/`` (what scripts do);
2. time to annotatable (remux) and to the full proxy from the upload's last piece, with the
   load average;
3. disk: media after ingest and at its peak vs the source; proxy bit rate vs the source's;
4. N seeks by a raw client doing what a ``<video>`` does (``Range: bytes=X-`` at a random
   offset, read what a GOP needs, drop the connection): bytes the client read vs bytes the
   server's access log says it sent, and server RSS after;
5. N seeks in headless Chromium on the player page (``bench/browser_seeks.py``): latency,
   frames exact, media bytes the browser received vs bytes the server sent, server RSS after.

    .venv/bin/python bench/large_upload.py --minutes 10 [--seeks 1000] [--browser-seeks 1000]
        [--target embedded|stack|both]

The stack needs PostgreSQL and Redis (``BENCH_DATABASE_URL``, ``BENCH_REDIS_URL``; a fresh
database named after the first) and root for nginx, as ``bin/run-stack`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from seed_source import seed_source  # noqa: E402
from upload_targets import make_target, packet_for, rss_of  # noqa: E402

from tests.http.live_server import read_response  # noqa: E402

MB = 1e6
MIB = 1024 * 1024
PIECE = 8 * MIB


class RssSampler:
    """Peak resident memory of the server's processes together, sampled every 50 ms."""

    def __init__(self, pids):
        self.pids, self.peak, self._stop = pids, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_of(self.pids()))
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
            status = data.split(b" ", 2)[1]
            assert status == b"206", data[:300]
            body = len(data.partition(b"\r\n\r\n")[2])
            while body < need:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += len(chunk)
            read += body
    return read, time.monotonic() - started


def logged(target, part: str, run):
    """``run()``'s result, and the bytes and answers the server logged for ``part`` meanwhile."""
    sent_before, count_before = target.sent(part)
    result = run()
    time.sleep(1.0)  # the last answers' lines reach the log
    sent, count = target.sent(part)
    return result, sent - sent_before, count - count_before


def measure(target, source: Path, probed, args) -> dict:
    """Every figure of the module docstring for one server; printed as they come."""
    size = source.stat().st_size
    fig: dict = {}

    def say(text: str) -> None:
        print(f"  [{target.key}] {text}", flush=True)

    token = target.start()
    time.sleep(2)
    rss = lambda: rss_of(target.server_pids())  # noqa: E731
    fig["idle"] = idle = rss()
    say(f"server idle RSS {idle / MIB:.0f} MiB ({len(target.server_pids())} processes); "
        f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")  # fmt: skip

    with RssSampler(target.server_pids) as sampler:
        status, body, seconds = multipart_upload(target.port, token, source, "anonymous", auth=False)
    fig["anonymous"] = (status, seconds, sampler.peak - idle)
    say(f"[1] anonymous multipart {size / MB:.0f} MB: {status} {body[:60]!r} in {seconds:.2f} s; "
        f"RSS peak +{(sampler.peak - idle) / MIB:.0f} MiB")  # fmt: skip

    media = target.media
    base = disk_bytes(media)
    load: list[float] = [os.getloadavg()[0]]
    peak_disk = [0]
    stop = threading.Event()

    def watch_disk():
        while not stop.is_set():
            peak_disk.append(disk_bytes(media) - base)
            time.sleep(1.0)

    watcher = threading.Thread(target=watch_disk, daemon=True)
    watcher.start()
    with RssSampler(target.server_pids) as sampler:
        answer, seconds = tus_upload(target.port, token, source, "tus")
    fig["tus"] = (seconds, sampler.peak - idle, rss() - idle)
    video_id = answer["video"]["id"]
    say(f"[1] tus upload (8 MiB pieces): {seconds:.1f} s ({size / MB / seconds:.0f} MB/s); RSS peak "
        f"+{(sampler.peak - idle) / MIB:.0f} MiB above idle, after +{(rss() - idle) / MIB:.0f} MiB")  # fmt: skip
    target.start_worker()
    marks = wait_ingest(target.port, token, video_id, load)
    stop.set()
    watcher.join()
    assert marks["job"]["status"] == "done", marks["job"]
    fig["annotatable"], fig["proxy_s"] = marks.get("annotatable", float("nan")), marks["proxy"]
    fig["load"] = (sum(load) / len(load), max(load))
    say(f"[2] annotatable {fig['annotatable']:.1f} s after the upload's last piece, full proxy "
        f"{marks['proxy']:.1f} s ({probed.duration / marks['proxy']:.2f}x real time); load average mean "
        f"{fig['load'][0]:.2f}, max {fig['load'][1]:.2f}")  # fmt: skip
    after = disk_bytes(media) - base
    script = f"from annotator.models import Video; print(Video.objects.get(pk={video_id}).proxy.name)"
    proxy_size = (media / target.manage("shell", "-c", script).strip().splitlines()[-1]).stat().st_size
    fig["proxy_kbps"] = proxy_kbps = proxy_size * 8 / probed.duration / 1000
    fig["disk"] = (after / size, max(peak_disk) / size)
    say(f"[3] media after ingest {after / MB:.0f} MB ({after / size:.2f}x the source), peak "
        f"{max(peak_disk) / MB:.0f} MB ({max(peak_disk) / size:.2f}x); proxy {proxy_size / MB:.0f} MB, "
        f"{proxy_kbps:.0f} kbit/s vs the source's video {probed.bit_rate / 1000:.0f} kbit/s "
        f"({proxy_kbps * 1000 / probed.bit_rate:.2f}x)")  # fmt: skip
    deadline = time.monotonic() + 90  # the sweep (every 10 s here) drops the remux 5 s after the proxy
    while time.monotonic() < deadline and list((media / "videos" / "remux").glob("*")):
        time.sleep(1.0)
    dropped = disk_bytes(media) - base
    fig["dropped"] = dropped / size
    say(f"[3] media once the remux is dropped: {dropped / MB:.0f} MB ({dropped / size:.2f}x the source)")

    packet, cookie_name, cookie = packet_for(target, video_id)
    url, part = f"/media/packets/{packet}/proxy.mp4", f"/media/packets/{packet}/"
    before = rss()
    need = 512 * 1024  # a GOP of 12 frames at this rate is ~40 KB; a player reads ahead more
    headers = {"Cookie": f"{cookie_name}={cookie}"}
    (read, seconds), sent, count = logged(
        target, part, lambda: seek_test(target.port, headers, url, proxy_size, args.seeks, need)
    )
    fig["raw"] = (read, sent, rss())
    say(f"[4] {args.seeks} raw seeks (Range: bytes=X-, read {need // 1024} KiB, drop): client read "
        f"{read / MB:.0f} MB, server logged {sent / MB:.0f} MB over {count} answers ({sent / max(read, 1):.2f}x); "
        f"{seconds:.1f} s; RSS {before / MIB:.0f} -> {rss() / MIB:.0f} MiB")  # fmt: skip

    if args.browser_seeks:
        from browser_seeks import browser_seeks

        before, base_url = rss(), f"http://127.0.0.1:{target.port}"
        seen, sent, count = logged(
            target,
            part,
            lambda: browser_seeks(base_url, packet, (cookie_name, cookie), probed.frame_count, args.browser_seeks),
        )
        fig["browser"] = (seen, sent, rss())
        say(f"[5] Chromium, {seen.seeks} random seeks: p50 / p95 / max {seen.p50_ms:.0f} / {seen.p95_ms:.0f} / "
            f"{seen.max_ms:.0f} ms, exact {seen.exact}/{seen.seeks}; the browser received {seen.received / MB:.1f} MB "
            f"off the network ({seen.cached / MB:.1f} MB more from its cache), "
            f"the server logged {sent / MB:.1f} MB over {count} answers "
            f"({sent / max(seen.received, 1):.2f}x); RSS {before / MIB:.0f} -> {rss() / MIB:.0f} MiB")  # fmt: skip

    with RssSampler(target.server_pids) as sampler:
        status, body, seconds = multipart_upload(target.port, token, source, "multipart")
    assert status == 202, body[:300]
    fig["multipart"] = (seconds, sampler.peak - idle)
    say(f"[1] multipart POST /api/videos/: {status} in {seconds:.1f} s; RSS peak "
        f"+{(sampler.peak - idle) / MIB:.0f} MiB above idle")  # fmt: skip
    return fig


def summary(f: dict, probed) -> list[tuple[str, str]]:
    """One server's figures as (label, value) rows."""
    ratio = probed.duration / f["proxy_s"]
    (status, anonymous_s, anonymous_rss), raw_read, raw_sent = f["anonymous"], f["raw"][0], f["raw"][1]
    rows = [
        ("server RSS idle", f"{f['idle'] / MIB:.0f} MiB"),
        ("anonymous upload: answer, RSS", f"{status} in {anonymous_s:.2f} s, +{anonymous_rss / MIB:.0f} MiB"),
        ("tus upload: time, RSS peak above idle", f"{f['tus'][0]:.1f} s, +{f['tus'][1] / MIB:.0f} MiB"),
        ("multipart upload: time, RSS peak above idle",
         f"{f['multipart'][0]:.1f} s, +{f['multipart'][1] / MIB:.0f} MiB"),
        ("annotatable after the last piece", f"{f['annotatable']:.1f} s"),
        ("full proxy", f"{f['proxy_s']:.0f} s ({ratio:.2f}x real time)"),
        ("load average during ingest, mean / max", f"{f['load'][0]:.2f} / {f['load'][1]:.2f}"),
        ("media after ingest / at peak", f"{f['disk'][0]:.2f}x / {f['disk'][1]:.2f}x the source"),
        ("media once the remux is dropped", f"{f['dropped']:.2f}x the source"),
        ("proxy bit rate", f"{f['proxy_kbps']:.0f} kbit/s ({f['proxy_kbps'] * 1000 / probed.bit_rate:.2f}x)"),
        ("raw seeks: logged / read, RSS after", f"{raw_sent / max(raw_read, 1):.2f}x, {f['raw'][2] / MIB:.0f} MiB"),
    ]  # fmt: skip
    if "browser" in f:
        seen, sent, rss = f["browser"]
        rows += [
            ("Chromium seeks: p50 / p95 / max, exact", f"{seen.p50_ms:.0f} / {seen.p95_ms:.0f} / {seen.max_ms:.0f} ms, "
                                                        f"{seen.exact}/{seen.seeks}"),
            ("Chromium seeks: sent / received, RSS after", f"{sent / max(seen.received, 1):.2f}x, {rss / MIB:.0f} MiB"),
        ]  # fmt: skip
    return rows


def side_by_side(results: dict[str, dict], probed) -> None:
    tables = {key: dict(summary(figures, probed)) for key, figures in results.items()}
    labels = list(next(iter(tables.values())))
    print("\n| figure | " + " | ".join(tables) + " |\n|---|" + "---|" * len(tables))
    for label in labels:
        print(f"| {label} | " + " | ".join(table.get(label, "-") for table in tables.values()) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the generated source")
    parser.add_argument("--seeks", type=int, default=1000, help="raw-client seeks")
    parser.add_argument("--browser-seeks", type=int, default=0, help="Chromium seeks on the player page")
    parser.add_argument("--target", choices=("embedded", "stack", "both"), default="embedded")
    parser.add_argument("--keep", action="store_true", help="keep the temporary var folders")
    args = parser.parse_args()
    source = seed_source(args.minutes)
    from annotator.base.media.probe import probe

    probed = probe(source)
    size = source.stat().st_size
    print(f"source: {source.name}, {size / MB:.1f} MB, {probed.frame_count} frames, "
          f"video {probed.bit_rate / 1000:.0f} kbit/s, {args.minutes:g} min", flush=True)  # fmt: skip
    results = {}
    for key in ("embedded", "stack") if args.target == "both" else (args.target,):
        target = make_target(key, ROOT)
        print(f"{target.name}:", flush=True)
        try:
            results[key] = measure(target, source, probed, args)
        finally:
            target.stop()
            if not args.keep:
                import shutil

                shutil.rmtree(target.var, ignore_errors=True)
    side_by_side(results, probed)


if __name__ == "__main__":
    main()
