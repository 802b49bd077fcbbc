"""Generated barcode videos (once per session) and ingested videos/packets (per test).

Every frame of a generated video shows its own index as a barcode
(``annotator.base.media.synthetic``), so any test can tell which frame it got.
Persona fixtures (``annotator_a``, ``maintainer``, ``outsider``...) come from
``tests/conftest.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from annotator.base.media import synthetic

# Small sizes and a few hundred frames: enough for several GOPs, fast on two cores.
FRAME_COUNTS = {
    "h264-24-gop250": 300,
    "h264-2997-gop12": 240,
    "h264-vfr-bframes": 240,
    "vp9-webm": 200,
    "h264-offset-1.5s": 200,
    "h264-rotated-90": 60,
    "h264-avi-bframes": 100,
    "h264-ts-open-gop": 144,
    "h264-intra-refresh": 150,
    "h264-mkv-untimed-start": 100,
    "h264-mkv-repeated-stamps": 100,
    "h264-ts-bframes": 100,
}
# Encodings whose container timestamps cannot time their frames (annotator.base.media.decoded).
UNTIMED = {"h264-mkv-untimed-start", "h264-mkv-repeated-stamps"}
# Made by a writer of their own: an open-GOP transport stream cut at its third I-frame
# (a non-IDR one), so its first two demuxed frames cannot be decoded.
OPEN_GOP_CUT = "h264-ts-open-gop-cut"
OPEN_GOP_CUT_FIRST_BARCODE = 48  # the cut starts at the third GOP of 24 frames
# Transport streams whose timestamps start again at frame 70 of 120 (two recordings joined
# byte for byte): exactly as the first part's (every stamp shared), or inside it (overlap).
TS_RESTART = "h264-ts-restart"
TS_RESTART_OVERLAP = "h264-ts-restart-overlap"
# An MP4 cut by stream copy at frame 15 (an edit list over the GOP of 12 before it).
EDIT_LIST_TRIM = "h264-mp4-edit-list-trim"
EDIT_LIST_TRIM_FIRST_BARCODE = 15
WRITERS = {
    OPEN_GOP_CUT: lambda path: synthetic.write_open_gop_cut(path.with_suffix(".ts"), 144, cut_gop=2),
    TS_RESTART: lambda path: synthetic.write_timestamp_restart(path.with_suffix(".ts"), 120, restart_at=70),
    TS_RESTART_OVERLAP: lambda path: synthetic.write_timestamp_restart(
        path.with_suffix(".ts"), 120, restart_at=70, restart_ticks=30
    ),
    EDIT_LIST_TRIM: lambda path: synthetic.write_edit_list_trim(path.with_suffix(".mp4"), 120, trim_at=15),
}


class SourceCache:
    """Writes each synthetic source once per session, on first use."""

    def __init__(self, root: Path):
        self.root = root
        self._paths: dict[str, Path] = {}

    def __call__(self, name: str) -> Path:
        if name not in self._paths and name in WRITERS:
            self._paths[name] = WRITERS[name](self.root / name)
        if name not in self._paths:
            encoding = synthetic.ENCODINGS[name]
            path = self.root / f"{name}{encoding.suffix}"
            synthetic.write_video(path, encoding, FRAME_COUNTS[name])
            self._paths[name] = path
        return self._paths[name]


@pytest.fixture(scope="session")
def synthetic_source(tmp_path_factory) -> SourceCache:
    return SourceCache(tmp_path_factory.mktemp("synthetic-sources"))


@pytest.fixture(scope="session")
def proxy_of(tmp_path_factory, synthetic_source):
    """name -> (proxy path, proxy frame table, probe of the source), made once per session."""
    from annotator.base.media.probe import probe
    from annotator.base.media.proxy import make_proxy

    root = tmp_path_factory.mktemp("synthetic-proxies")
    made = {}

    def get(name: str):
        if name not in made:
            source = synthetic_source(name)
            probed = probe(source)
            dest = root / f"{name}.mp4"
            made[name] = (dest, make_proxy(source, dest, probed), probed)
        return made[name]

    return get


# Chunk size of the ingest fixture: every fixture video of more than this many frames gets
# a proxy joined from chunks (several per video), so the player tests run on joined proxies.
FIXTURE_CHUNK_FRAMES = 48


@pytest.fixture
def eager_celery():
    """Celery tasks run inline (``.delay`` calls the task): the real tasks, no broker."""
    from deploy.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = before


@pytest.fixture
def ingest(synthetic_source, maintainer, eager_celery, django_capture_on_commit_callbacks):
    """name -> a ready Video ingested from that synthetic source (real ingest and tasks).

    Sources longer than ``chunk_frames`` (default ``FIXTURE_CHUNK_FRAMES``) are encoded in
    chunks by the ``annotator.ingest_chunk`` tasks and joined by ``annotator.ingest_join``;
    ``chunk_frames=0`` makes one pass.
    """
    from django.core.files import File

    from annotator.actions.ingest import do_ingest_video
    from annotator.models import Job, Video

    def make(name: str, *, title: str | None = None, chunk_frames: int = FIXTURE_CHUNK_FRAMES):
        source = synthetic_source(name)
        video = Video.objects.create(title=title or name, original_name=source.name, created_by=maintainer)
        with open(source, "rb") as fh:
            video.original.save(source.name, File(fh), save=True)
        job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
        with django_capture_on_commit_callbacks(execute=True):
            do_ingest_video(video, job, chunk_frames=chunk_frames)
        video.refresh_from_db()
        assert video.status == Video.Status.READY, video.error
        return video

    return make


@pytest.fixture
def media_packet(ingest, maintainer, annotator_a, annotator_b, adjudicator):
    """name -> a packet whose video is that synthetic source, ingested."""
    from tests.factories import make_packet

    def make(name: str):
        return make_packet(maintainer, annotator_a, annotator_b, adjudicator, video=ingest(name), title=name)

    return make


def copy_to(path: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(path, dest_dir / path.name))
