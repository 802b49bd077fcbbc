"""A generated file of the seed's shape: H.264 High 1280x720 at 30000/1001 fps, about
770 kbit/s of video (x264 ABR with a VBV cap), stereo AAC audio, every frame barcoded
(``annotator.base.media.synthetic``: a textured background scrolls a pixel a frame, so the
encoder has real motion to code). Cached under ``var/bench/``.

    .venv/bin/python bench/seed_source.py --minutes 10
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHE = ROOT / "var" / "bench"
RATE = Fraction(30000, 1001)
WIDTH, HEIGHT = 1280, 720
VIDEO_KBPS = 770


def seed_source(minutes: float, *, cache: Path = CACHE) -> Path:
    """The cached seed-shaped source of ``minutes`` minutes (written when missing)."""
    from annotator.base.media import synthetic

    frames = int(round(minutes * 60 * float(RATE)))
    path = cache / f"seed-720p-2997-{frames}.mp4"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part.mp4")
    synthetic.write_broadcast_like(partial, frames, width=WIDTH, height=HEIGHT, video_kbps=VIDEO_KBPS)
    partial.rename(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    started = time.perf_counter()
    path = seed_source(args.minutes)
    size = path.stat().st_size
    seconds = args.minutes * 60
    print(f"{path}: {size / 1e6:.1f} MB, {size * 8 / seconds / 1000:.0f} kbit/s in all, "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
