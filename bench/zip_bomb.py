"""Zip-bomb refusal: what a hostile submission archive costs with and without the caps.

Run: ``.venv/bin/python bench/zip_bomb.py [--mib 512]``.

It builds a zip of one entry of ``--mib`` MiB of zeros (deflate, level 9: about 1 KB per
MiB), then expands it with ``annotator.base.grading.uploads.expand_zip`` twice, side by side
in this process: with the default caps (``ZipLimits()``), and with every cap lifted (what
the upload path did before issue 10). It prints the archive size, the wall time and the
bytes the reader inflated in each case, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from annotator.base.grading.uploads import ByteCap, InflateCounter, UploadRefused, ZipLimits, expand_zip  # noqa: E402

MiB = 1024 * 1024
NO_CAPS = ZipLimits(entries=10**9, entry_bytes=2**62, total_bytes=2**62, ratio=2**62, directory_bytes=2**62)


def bomb(mib: int) -> bytes:
    buffer = io.BytesIO()
    zero = bytes(MiB)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("agent/solution.json", "w", force_zip64=True) as entry:
            for _ in range(mib):
                entry.write(zero)
    return buffer.getvalue()


class Measured(InflateCounter):
    """The real counter, remembering how many bytes went through it."""

    seen = 0

    def count(self, name, compressed, chunks):
        for chunk in super().count(name, compressed, chunks):
            Measured.seen += len(chunk)
            yield chunk


def run(data: bytes, limits: ZipLimits) -> tuple[float, str]:
    import annotator.base.grading.uploads as uploads

    Measured.seen = 0
    original, uploads.InflateCounter = uploads.InflateCounter, Measured
    started = time.perf_counter()
    try:
        files = expand_zip(io.BytesIO(data), ByteCap(16 * MiB, "over the cap"), limits=limits)
        outcome = f"taken: {len(files)} file(s), {files[0].size} bytes hashed, kept={files[0].content is not None}"
    except UploadRefused as error:
        outcome = f"refused: {error}"
    finally:
        uploads.InflateCounter = original
    return time.perf_counter() - started, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=512)
    args = parser.parse_args()
    data = bomb(args.mib)
    print(f"archive: {len(data):,} bytes holding one {args.mib} MiB entry; load average {os.getloadavg()[0]:.2f}")
    for label, limits in (("default caps", ZipLimits()), ("no caps (before)", NO_CAPS)):
        seconds, outcome = run(data, limits)
        print(f"{label:>17}: {seconds * 1000:9.1f} ms, {Measured.seen:,} bytes inflated; {outcome}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
