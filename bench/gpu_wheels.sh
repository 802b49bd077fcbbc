#!/usr/bin/env bash
# The packages bench/gpu_check.sh needs on a CUDA machine that has Python 3.12, torch, numpy,
# pillow, pytest and hypothesis but not the rest of requirements.txt: downloaded here as
# manylinux wheels for CPython 3.12 into two folders, each small enough to travel with one
# call to that machine (the working tree and what travels with it: 64 MiB a call):
#   .whl   the Django stack, Celery, psycopg, cryptography, pytest-django, ... (about 34 MB)
#   .whl2  PyAV (about 35 MB)
# and the Debian packages of the sandbox's tools into .debs (bubblewrap, e2fsprogs).
# Then, on that machine: one call carrying .whl that installs it into /tmp/gpu-site, and
# while the machine is still warm, `GPU_CHECK_WHEELS=.whl2 GPU_CHECK_DEBS=.debs bash
# bench/gpu_check.sh` carrying .whl2 and .debs (docs/retrieval.md, "The GPU check").
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
all=$(mktemp -d)
trap 'rm -rf "$all"' EXIT
grep -v -E '^(#|-r|torch==|$)' requirements.txt >"$all/requirements.txt"
grep -E '^(pytest-django|pytest|hypothesis)==' requirements-dev.txt >>"$all/requirements.txt"
"$py" -m pip download -q --only-binary=:all: --implementation cp --python-version 3.12 \
  --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 -d "$all/wheels" -r "$all/requirements.txt"
rm -rf .whl .whl2 .debs
mkdir -p .whl .whl2 .debs
for wheel in "$all"/wheels/*.whl; do
  case "$(basename "$wheel")" in
    av-*) cp "$wheel" .whl2/ ;;
    # on that machine already, or not used by the check (imageio-ffmpeg's binary: 66 MB)
    imageio_ffmpeg-* | numpy-* | pillow-* | pytest-[0-9]* | hypothesis-* | pygments-* | pyyaml-* | packaging-* | \
      pluggy-* | iniconfig-* | typing_extensions-* | python_dateutil-* | six-* | idna-* | certifi-* | attrs-* | \
      sortedcontainers-* | h11-* | anyio-* | click-8* | prometheus_client-* | uvloop-* | httptools-* | \
      watchfiles-* | websockets-*) ;;
    *) cp "$wheel" .whl/ ;;
  esac
done
(cd .debs && apt-get download bubblewrap e2fsprogs libext2fs2 libcom-err2 libss2 >/dev/null)
for folder in .whl .whl2 .debs; do
  grep -qx "/$folder/" .git/info/exclude 2>/dev/null || echo "/$folder/" >>.git/info/exclude
done
du -sh .whl .whl2 .debs
