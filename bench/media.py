"""Media benchmarks. Prints figures; asserts only that every measured seek was exact.

1. Frame table of a long video (default 214,363 frames at 30000/1001, the two-hour tennis
   match): packet demux with PyAV (what ingest does) against tools that decode every
   frame. There is no ffprobe here (imageio-ffmpeg ships only ffmpeg), so the slow
   comparators are named for what they are: ``ffmpeg -vf showinfo -f null -`` (decodes
   and prints every frame's pts, as ``ffprobe -show_frames`` does) and a PyAV full decode.
2. Seek latency in headless Chromium through the real app (live server, media view,
   player page): p50/p95 of ``seekToFrame`` for a GOP 12 proxy (what ingest makes) and a
   GOP 250 proxy of the same textured source; every seek's displayed barcode is checked.
3. Exact-frame endpoint latency (HTTP, PNG) on both proxies.

Usage::

    .venv/bin/python bench/media.py                     # everything
    .venv/bin/python bench/media.py --skip-browser      # frame table only
    .venv/bin/python bench/media.py --table-frames 20000 --seek-size 640x360

Generated videos are cached under ``var/bench/``. The server is the embedded default's
(uvicorn, as ``bin/run-demo`` runs it) unless ``BENCH_SERVER=wsgi`` (Django's live server).
Figures depend on the machine and on what else runs on it; the numbers in docs/media.md say where they were taken.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

ROOT = REPO_ROOT

CACHE = ROOT / "var" / "bench"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def line(label: str, value: str) -> None:
    print(f"  {label:<58} {value}", flush=True)


# --- 1. frame table ------------------------------------------------------------------


def long_video(frames: int) -> Path:
    from annotator.base.media import synthetic

    path = CACHE / f"table-{frames}-2997-bf3-gop250.mp4"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    encoding = replace(
        synthetic.ENCODINGS["h264-2997-gop12"],
        gop=250,
        options={
            "preset": "ultrafast",
            "crf": "30",
            "x264-params": "keyint=250:min-keyint=250:scenecut=0:bframes=3:b-adapt=0",
        },
    )
    print(f"  generating {frames} frames (160x96, 29.97 fps, B-frames, GOP 250) -> {path} ...", flush=True)
    started = time.perf_counter()
    partial = path.with_name(f"{path.name}.part{path.suffix}")
    synthetic.write_video(partial, encoding, frames)
    partial.rename(path)
    line("generation", f"{time.perf_counter() - started:.1f} s")
    return path


def timed(func, repeat: int = 1) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - started)
    return best, result


def textured_source(size: tuple[int, int], frames: int) -> Path:
    """A textured 24 fps H.264 source with B-frames and GOP 250 (cached)."""
    from annotator.base.media import synthetic

    width, height = size
    source = CACHE / f"seek-{width}x{height}-{frames}.mp4"
    if not source.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        print(f"  generating the textured source {source.name} ...", flush=True)
        partial = source.with_suffix(".part.mp4")
        synthetic.write_video(partial, "h264-24-gop250", frames, width=width, height=height, textured=True)
        partial.rename(source)
    return source


def showinfo_seconds(path: Path) -> tuple[float, int]:
    import imageio_ffmpeg

    ffmpeg = imageio_ffmpeg.get_ffmpeg_exe()
    started = time.perf_counter()
    done = subprocess.run(
        [ffmpeg, "-hide_banner", "-nostats", "-i", str(path), "-map", "0:v", "-vf", "showinfo", "-f", "null", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stderr.count(" pts_time:")


def bench_frame_table(frames: int, skip_slow: bool, size: tuple[int, int], clip_frames: int) -> None:
    import av

    from annotator.base.media.frametable import build_frame_table

    print(f"\n[1] Frame table of a {frames:,}-frame video", flush=True)
    path = long_video(frames)
    seconds, table = timed(lambda: build_frame_table(path), repeat=3)
    line("PyAV packet demux -> frame table (best of 3)", f"{seconds:.2f} s  ({table.frame_count:,} frames)")
    duration = table.duration
    line("video duration", f"{duration / 3600:.2f} h ({duration:.0f} s), {table.rate} fps")
    if skip_slow:
        return
    seconds_ff, counted = showinfo_seconds(path)
    line("ffmpeg -vf showinfo -f null - (decodes every frame)", f"{seconds_ff:.2f} s  ({counted:,} frames)")

    def full_decode() -> int:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            return sum(1 for _ in container.decode(stream))

    seconds_av, decoded = timed(full_decode)
    line("PyAV full decode", f"{seconds_av:.2f} s  ({decoded:,} frames)")
    line(
        "speed-up of the table over showinfo / full decode",
        f"{seconds_ff / seconds:.0f}x / {seconds_av / seconds:.0f}x",
    )
    if not (counted == decoded == table.frame_count):
        raise SystemExit(f"frame counts disagree: table {table.frame_count}, showinfo {counted}, decode {decoded}")
    # Decoding cost grows with the picture; demux does not. Measure on a real-size clip.
    clip = textured_source(size, clip_frames)
    clip_ff, clip_count = showinfo_seconds(clip)
    clip_table, _ = timed(lambda: build_frame_table(clip), repeat=3)
    minutes = clip_ff / clip_count * frames / 60
    line(
        f"showinfo on a {size[0]}x{size[1]} textured clip ({clip_count} frames)",
        f"{clip_ff:.2f} s -> extrapolated to {frames:,} frames: ~{minutes:.0f} min",
    )
    line("frame table of that clip (demux reads packets, decodes nothing)", f"{clip_table:.3f} s")


# --- 4. ingest of a long broadcast-like source ---------------------------------------

BROADCAST_SIZE = (1920, 1080)


def broadcast_source(minutes: float, open_gop: bool = False) -> Path:
    """A textured 1080p30 H.264 source at ~6 Mbit/s with B-frames, GOP 60 (cached).
    ``open_gop``: x264 open GOPs in MPEG-TS, as broadcast encoders write them (no remux:
    docs/media.md §2.4)."""
    from fractions import Fraction

    from annotator.base.media import synthetic

    frames = int(round(minutes * 60 * 30))
    shape = "open-gop.ts" if open_gop else "mp4"
    path = CACHE / f"broadcast-1080p30-{frames}.{shape}"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    params = "keyint=60:min-keyint=60:scenecut=0:bframes=2:b-adapt=0:bitrate=6000:vbv-maxrate=6000:vbv-bufsize=12000"
    encoding = synthetic.Encoding(
        "broadcast-1080p30",
        "mpegts" if open_gop else "mp4",
        path.suffix,
        "libx264",
        Fraction(30),
        gop=60,
        bframes=2,
        options={"preset": "ultrafast", "x264-params": params + (":open-gop=1" if open_gop else "")},
    )
    print(f"  generating {frames} frames 1920x1080 textured at ~6 Mbit/s -> {path} ...", flush=True)
    started = time.perf_counter()
    partial = path.with_name(f"{path.name}.part{path.suffix}")
    synthetic.write_video(partial, encoding, frames, width=1920, height=1080, textured=True)
    partial.rename(path)
    line("generation", f"{time.perf_counter() - started:.0f} s")
    return path


def _encode_chunk_process(args) -> float:
    from annotator.base.media.chunks import encode_chunk

    workdir, index = args
    started = time.perf_counter()
    encode_chunk(Path(workdir), index)
    return time.perf_counter() - started


def ingest_with_workers(source: Path, workers: int, chunk_frames: int, maintainer, remux_first: bool = True):
    """Ingest ``source`` as the Celery tasks would: ``annotator.ingest_video`` (with the remux
    first when ``remux_first``: the video is annotatable when it returns), then for the remux
    path ``annotator.ingest_proxy``; the ``annotator.ingest_chunk`` task body
    (``encode_chunk``) runs in ``workers`` processes, then ``annotator.ingest_join``."""
    import multiprocessing

    from django.db import connections

    from annotator.actions.ingest import do_encode_proxy, do_ingest_video
    from annotator.actions.ingest_chunks import _workdir, do_join_chunks
    from annotator.base import queue
    from annotator.models import Job, Video

    video = Video.objects.create(title=f"broadcast x{workers}", original_name=source.name, created_by=maintainer)
    from django.conf import settings

    link = Path(settings.MEDIA_ROOT) / "videos" / "original" / f"bench-{video.pk}{source.suffix}"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(source)
    video.original.name = str(link.relative_to(settings.MEDIA_ROOT))
    video.save()
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    queued: list[int] = []
    real_send = queue.send
    proxy_queued: list[int] = []

    def send(name, args, **options):
        if name == queue.INGEST_CHUNK:
            queued.append(args[2])
        elif name == queue.INGEST_PROXY:
            proxy_queued.append(args[1])
        else:
            real_send(name, args, **options)

    queue.send = send
    started = time.perf_counter()
    annotatable = None
    try:
        do_ingest_video(video, job, chunk_frames=chunk_frames, remux_first=remux_first)
        video.refresh_from_db()
        if proxy_queued and video.status == Video.Status.READY:
            annotatable = time.perf_counter() - started
            job.refresh_from_db()
            do_encode_proxy(video, job, chunk_frames=chunk_frames)
    finally:
        queue.send = real_send
    planned = time.perf_counter() - started
    job.refresh_from_db()
    if job.status != Job.Status.RUNNING:
        raise SystemExit(f"ingest did not start chunked: {job.status} {job.message}")
    workdir = _workdir(job)
    connections.close_all()  # no shared connection across the fork
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        chunk_seconds = pool.map(_encode_chunk_process, [(str(workdir), i) for i in queued], chunksize=1)
    encoded = time.perf_counter() - started
    do_join_chunks(video, job)
    total = time.perf_counter() - started
    video.refresh_from_db()
    if video.status != Video.Status.READY or not video.proxy:
        raise SystemExit(f"ingest failed: {video.error}")
    return video, {
        "annotatable": annotatable if annotatable is not None else total,
        "remux": annotatable is not None,
        "planned": planned,
        "encoded": encoded,
        "total": total,
        "chunks": len(queued),
        "chunk_p50": statistics.median(chunk_seconds),
    }


def bench_ingest(
    minutes: float,
    worker_counts: list[int],
    chunk_frames: int,
    seeks: int,
    remux_first: bool = True,
    open_gop: bool = False,
) -> None:
    """Real-time factor of ingest with 1 and 2 workers, proxy bit rate, seeks on the first
    rendition annotation is offered on (the remux, else the proxy)."""
    shape = "open-GOP MPEG-TS" if open_gop else "MP4"
    print(f"\n[4] Ingest of a {minutes:g}-minute 1080p30 textured source at ~6 Mbit/s ({shape})", flush=True)
    line("load average before (1 / 5 / 15 min)", " / ".join(f"{v:.2f}" for v in os.getloadavg()))
    source = broadcast_source(minutes, open_gop)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with tempfile.TemporaryDirectory(prefix="frameledger-bench-ingest-") as tmp:
        server = django_live_server(Path(tmp))
        from django.contrib.auth.models import Group, User

        from annotator.base.media.probe import probe

        maintainer = User.objects.create_user("bench-maintainer", password="x")
        maintainer.groups.add(Group.objects.get_or_create(name="maintainers")[0])
        probed = probe(source)
        duration = probed.duration
        line(
            "source",
            f"{probed.frame_count} frames, {duration:.0f} s, {probed.bit_rate / 1e6:.2f} Mbit/s, "
            f"{probed.width}x{probed.height}",
        )
        video = None
        for workers in worker_counts:
            video, t = ingest_with_workers(source, workers, chunk_frames, maintainer, remux_first)
            line(
                f"{workers} worker(s), {t['chunks']} chunks of {chunk_frames} frames: ingest wall time",
                f"{t['total']:.0f} s = {duration / t['total']:.2f}x real time "
                f"(hash+probe{'+remux' if t['remux'] else ''} {t['planned']:.0f} s, "
                f"chunks done at {t['encoded']:.0f} s, "
                f"chunk p50 {t['chunk_p50']:.0f} s)",
            )
            first = "the remux" if t["remux"] else "the proxy"
            line(
                f"{workers} worker(s): time until annotatable ({first} is the first rendition)",
                f"{t['annotatable']:.1f} s; full proxy at {t['total']:.0f} s",
            )
            line("load average after (1 / 5 / 15 min)", " / ".join(f"{v:.2f}" for v in os.getloadavg()))
        proxy_bps = Path(video.proxy.path).stat().st_size * 8 / video.duration
        line(
            "proxy vs source bit rate (whole files / duration)",
            f"{proxy_bps / 1e6:.2f} vs {source.stat().st_size * 8 / duration / 1e6:.2f} Mbit/s "
            f"({proxy_bps / (source.stat().st_size * 8 / duration):.0%})",
        )
        table_json = Path(video.frame_table.path).read_bytes()
        import gzip

        line("frames.json of that proxy, bytes (gzipped)", f"{len(table_json):,} ({len(gzip.compress(table_json)):,})")
        if seeks:
            seek_on_video(server, video, maintainer, seeks)
        server.terminate()


def seek_on_video(server, video, maintainer, seeks: int) -> None:
    from django.contrib.auth.models import User
    from playwright.sync_api import sync_playwright

    from annotator.actions.packets import do_create_packet
    from annotator.base.media import synthetic
    from annotator.models import TaskKind

    people = [User.objects.create_user(name, password="x") for name in ("bench-a", "bench-b", "bench-adj")]
    packet = do_create_packet(
        actor=maintainer,
        title="broadcast",
        video=video,
        task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotator_a=people[0],
        annotator_b=people[1],
        adjudicator=people[2],
    )
    from django.conf import settings

    base = f"http://localhost:{server.port}"
    rng = random.Random(16)
    targets = [rng.randrange(video.frame_count) for _ in range(seeks)]
    warmup = [rng.randrange(video.frame_count) for _ in range(10)]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context()
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session_cookie(people[0]), "url": base}])
        page = context.new_page()
        page.goto(f"{base}/packets/{packet.pk}/player/")
        page.wait_for_function(
            "() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)"
        )
        size = page.evaluate(
            "[window.frameledger.player.video.videoWidth, window.frameledger.player.video.videoHeight]"
        )
        boxes = synthetic.cell_boxes(*size)
        results = page.evaluate(SEEK_JS, {"targets": targets, "boxes": boxes, "warmup": warmup})
        times = [r["ms"] for r in results]
        exact = sum(1 for r in results if synthetic.decode_cell_means(r["means"]) == r["target"] == r["got"])
        line(
            f"Chromium seeks on that proxy ({size[0]}x{size[1]}), {len(times)} random, p50 / p95 / max",
            f"{statistics.median(times):.0f} / {percentile(times, 0.95):.0f} / {max(times):.0f} ms"
            f"   exact {exact}/{len(results)}",
        )
        browser.close()


# --- 5. x264 settings of the proxy ------------------------------------------------------


def bench_x264(minutes: float) -> None:
    """Proxy encode speed and size for presets x CRF on a short broadcast-like source."""
    import itertools

    from annotator.base.media.probe import probe
    from annotator.base.media.proxy import make_proxy

    seconds = minutes * 60
    print(f"\n[5] x264 settings: a {seconds:.0f} s 1080p30 ~6 Mbit/s source -> 720p GOP 12 proxy", flush=True)
    line("load average (1 / 5 / 15 min)", " / ".join(f"{v:.2f}" for v in os.getloadavg()))
    clip = broadcast_source(minutes)
    with tempfile.TemporaryDirectory(prefix="frameledger-x264-") as tmp:
        probed = probe(clip)
        source_bps = clip.stat().st_size * 8 / probed.duration
        for preset, crf in itertools.product(("ultrafast", "superfast", "veryfast", "faster"), (20, 23)):
            dest = Path(tmp) / f"{preset}-{crf}.mp4"
            started = time.perf_counter()
            make_proxy(clip, dest, probed, preset=preset, crf=crf)
            took = time.perf_counter() - started
            bps = dest.stat().st_size * 8 / probed.duration
            line(
                f"preset={preset} crf={crf}",
                f"{probed.frame_count / took:.0f} fps = {probed.duration / took:.2f}x real time, "
                f"{bps / 1e6:.2f} Mbit/s ({bps / source_bps:.0%} of the source)",
            )


# --- 2 and 3. seeks in Chromium, exact-frame endpoint ---------------------------------


def django_live_server(media_root: Path):
    setup_django()
    from django.conf import settings
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.db import connections
    from django.test.testcases import LiveServerThread
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.MEDIA_ROOT = str(media_root)
    # A file database, so every server thread opens its own connection (no shared one).
    connections["default"].settings_dict["TEST"]["NAME"] = str(media_root / "bench.sqlite3")
    connections["default"].creation.create_test_db(verbosity=0)
    if os.environ.get("BENCH_SERVER", "uvicorn") == "uvicorn":
        return EmbeddedServer()
    server = LiveServerThread("localhost", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    return server


class EmbeddedServer:
    """The embedded default's server (uvicorn, ``deploy.serve``'s configuration) in a forked
    child on the bench database (``BENCH_SERVER=uvicorn``, the default; ``wsgi``: Django's
    threaded live server, as before). Rows made after the fork are seen (a file database)."""

    def __init__(self):
        from functools import partial

        from channels.testing.live import make_application
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
        from django.db import connections

        from tests.http.live_server import UvicornProcess

        connections.close_all()
        self.process = UvicornProcess("localhost", partial(make_application, static_wrapper=ASGIStaticFilesHandler))
        self.process.start()
        if not self.process.ready.wait(30):
            raise RuntimeError("the server did not start")
        self.port = self.process.port.value

    def terminate(self):
        self.process.terminate()
        self.process.join(10)


def make_videos(size: tuple[int, int], frames: int, media_root: Path):
    """A textured 24 fps B-frame source, ingested (GOP 12) and proxied again with GOP 250."""
    from django.contrib.auth.models import Group, User
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video, file_sha256
    from annotator.actions.packets import do_create_packet
    from annotator.base.media.probe import probe
    from annotator.base.media.proxy import make_proxy
    from annotator.base.media.thumbs import make_thumbnails
    from annotator.models import Job, TaskKind, Video

    width, height = size
    source = textured_source(size, frames)

    maintainer = User.objects.create_user("bench-maintainer", password="x")
    maintainer.groups.add(Group.objects.get_or_create(name="maintainers")[0])
    people = [User.objects.create_user(name, password="x") for name in ("bench-a", "bench-b", "bench-adj")]

    video12 = Video.objects.create(title="gop12", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as fh:
        video12.original.save(source.name, File(fh), save=True)
    job = Job.objects.create(kind="ingest", video=video12, created_by=maintainer)
    started = time.perf_counter()
    do_ingest_video(video12, job, remux_first=False)  # the proxy is what this part measures
    ingest_seconds = time.perf_counter() - started
    if video12.status != Video.Status.READY:
        raise SystemExit(f"ingest failed: {video12.error}")
    line(
        f"ingest of {frames} frames {width}x{height} (hash, probe, GOP 12 proxy, table, thumbs)",
        f"{ingest_seconds:.1f} s",
    )

    # The same source as a GOP 250 proxy, placed like ingest places files.
    probed = probe(source)
    folder = media_root / "videos" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    proxy = folder / "gop250.mp4"
    table = make_proxy(source, proxy, probed, gop=250)
    (folder / "gop250.json").write_text(table.dumps())
    meta = make_thumbnails(proxy, table, folder / "gop250.jpg")
    video250 = Video.objects.create(
        title="gop250",
        status=Video.Status.READY,
        sha256=video12.sha256,
        codec=probed.codec,
        width=width,
        height=height,
        frame_rate_num=probed.rate.numerator,
        frame_rate_den=probed.rate.denominator,
        frame_count=table.frame_count,
        duration=probed.duration,
        proxy="videos/bench/gop250.mp4",
        proxy_sha256=file_sha256(proxy),
        frame_table="videos/bench/gop250.json",
        thumbnails="videos/bench/gop250.jpg",
        thumbnail_meta=meta,
        created_by=maintainer,
    )
    kind = TaskKind.objects.get(slug="action-ledger")
    packets = {}
    for label, video in (("GOP 12", video12), ("GOP 250", video250)):
        packets[label] = do_create_packet(
            actor=maintainer,
            title=label,
            video=video,
            task_kind=kind,
            annotator_a=people[0],
            annotator_b=people[1],
            adjudicator=people[2],
        )
    return people[0], packets


LOADED_JS = "() => window.frameledger && (window.frameledger.player || window.frameledger.loadError)"
SEEK_JS = """
async ({ targets, boxes, warmup }) => {
  const player = window.frameledger.player;
  const read = () => {
    const video = player.video;
    const canvas = document.createElement("canvas");
    canvas.width = video.videoWidth; canvas.height = video.videoHeight;
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    ctx.drawImage(video, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    return boxes.map(([x, y, w, h]) => {
      let sum = 0;
      for (let yy = y; yy < y + h; yy += 2) for (let xx = x; xx < x + w; xx += 2) {
        const i = (yy * canvas.width + xx) * 4;
        sum += 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
      }
      return sum / (Math.ceil(w / 2) * Math.ceil(h / 2));
    });
  };
  for (const t of warmup) await player.seekToFrame(t);
  const out = [];
  for (const target of targets) {
    const started = performance.now();
    const got = await player.seekToFrame(target);
    const ms = performance.now() - started;
    out.push({ target, got, ms, means: read() });
  }
  return out;
}
"""


def session_cookie(user) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def bench_browser(size: tuple[int, int], frames: int, seeks: int, frame_requests: int) -> None:
    import urllib.request

    from annotator.base.media import synthetic

    if not Path(CHROMIUM).exists():
        print(f"\n[2] skipped: {CHROMIUM} is not installed")
        return
    print(f"\n[2] Seek latency in headless Chromium ({size[0]}x{size[1]}, {frames} frames, 24 fps source)", flush=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # rows are made before Playwright starts
    with tempfile.TemporaryDirectory(prefix="frameledger-bench-") as tmp:
        server = django_live_server(Path(tmp))
        base = f"http://localhost:{server.port}"
        user, packets = make_videos(size, frames, Path(tmp))
        cookie = session_cookie(user)
        from django.conf import settings

        cookie_name = settings.SESSION_COOKIE_NAME
        boxes = synthetic.cell_boxes(*size)
        rng = random.Random(12)
        targets = [rng.randrange(frames) for _ in range(seeks)]
        warmup = [rng.randrange(frames) for _ in range(10)]
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for label, packet in packets.items():
                context = browser.new_context()
                context.add_cookies([{"name": cookie_name, "value": cookie, "url": base}])
                page = context.new_page()
                page.goto(f"{base}/packets/{packet.pk}/player/")
                page.wait_for_function(LOADED_JS)
                results = page.evaluate(SEEK_JS, {"targets": targets, "boxes": boxes, "warmup": warmup})
                times = [r["ms"] for r in results]
                exact = sum(1 for r in results if synthetic.decode_cell_means(r["means"]) == r["target"] == r["got"])
                line(
                    f"{label} proxy: {len(times)} random seeks, p50 / p95 / max",
                    f"{statistics.median(times):.0f} / {percentile(times, 0.95):.0f} / {max(times):.0f} ms"
                    f"   exact {exact}/{len(results)}",
                )
                context.close()
            browser.close()

        print(f"\n[3] Exact-frame endpoint ({size[0]}x{size[1]}) over HTTP, random frames", flush=True)
        for label, packet in packets.items():
            for fmt in ("png", "jpg"):
                latencies, sizes = [], []
                for n in [rng.randrange(frames) for _ in range(frame_requests)]:
                    request = urllib.request.Request(
                        f"{base}/media/packets/{packet.pk}/frames/{n}.{fmt}",
                        headers={"Cookie": f"{cookie_name}={cookie}"},
                    )
                    started = time.perf_counter()
                    with urllib.request.urlopen(request) as response:
                        sizes.append(len(response.read()))
                    latencies.append((time.perf_counter() - started) * 1000)
                line(
                    f"{label} proxy, {fmt.upper()} ({statistics.median(sizes) // 1024} KiB): "
                    f"{frame_requests} frames, p50 / p95",
                    f"{statistics.median(latencies):.0f} / {percentile(latencies, 0.95):.0f} ms",
                )
        server.terminate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table-frames", type=int, default=214_363)
    parser.add_argument("--seek-size", default="1280x720")
    parser.add_argument("--seek-frames", type=int, default=600)
    parser.add_argument("--seeks", type=int, default=150)
    parser.add_argument("--frame-requests", type=int, default=60)
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--skip-slow", action="store_true", help="skip the full-decode comparators")
    parser.add_argument("--ingest", action="store_true", help="only [4]: ingest of a long 1080p30 source")
    parser.add_argument("--ingest-minutes", type=float, default=20.0)
    parser.add_argument("--ingest-workers", default="1,2")
    parser.add_argument("--chunk-frames", type=int, default=1800)
    parser.add_argument("--proxy-first", action="store_true", help="[4] without the remux (the old path)")
    parser.add_argument("--generate-only", action="store_true", help="only write the cached ingest source")
    parser.add_argument("--open-gop", action="store_true", help="[4] on an open-GOP MPEG-TS source")
    parser.add_argument("--x264", action="store_true", help="only [5]: proxy presets x CRF on a source clip")
    args = parser.parse_args()
    if args.x264:
        bench_x264(args.ingest_minutes)
        return
    if args.generate_only:
        broadcast_source(args.ingest_minutes, args.open_gop)
        return
    if args.ingest:
        workers = [int(w) for w in args.ingest_workers.split(",")]
        bench_ingest(args.ingest_minutes, workers, args.chunk_frames, args.seeks, not args.proxy_first, args.open_gop)
        return
    size = tuple(int(v) for v in args.seek_size.lower().split("x"))
    print(f"FrameLedger media bench: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}", flush=True)
    bench_frame_table(args.table_frames, args.skip_slow, size, args.seek_frames)
    if not args.skip_browser:
        bench_browser(size, args.seek_frames, args.seeks, args.frame_requests)


if __name__ == "__main__":
    main()
