#!/usr/bin/env bash
# The GPU path, checked on a machine with a CUDA device, in one run (about 4 minutes on one
# H200 with 16 cores):
#   1. the device: nvidia-smi, torch's view of it;
#   2. the CUDA tests (`-m gpu`): the all-interval scan and the predictor equal on CPU and
#      CUDA, training on CUDA, and the reference bundle asked for with device=cuda, routed to
#      the GPU queue and run by a Celery worker in the bubblewrap sandbox with the NVIDIA
#      device nodes (tests/grading/test_bundles_gpu.py);
#   3. bench/retrieval.py --device cuda: the all-interval scan in intervals/s on CPU and CUDA,
#      search latency p50/p95 on a 2-hour video, index build time, quality.
# Figures and logs go to $OUT (default var/gpu-check). Python packages the machine lacks can
# be installed first from folders of wheels: GPU_CHECK_WHEELS="dir1 dir2" (each *.whl in them,
# into /tmp/gpu-site, put on PYTHONPATH). GPU_CHECK_PYTHON names the interpreter (python3).
# GPU_CHECK_DEBS=dir: Debian packages of the sandbox's tools for a machine without them
# (bubblewrap, e2fsprogs and its libraries), unpacked under /tmp/gpu-debs; bwrap and
# mkfs.ext4 are then linked where the sandbox looks (/usr/bin, /usr/sbin) only when missing.
# Each part has its own time limit, so one hung part never costs the others.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-var/gpu-check}
mkdir -p "$out"
py=${GPU_CHECK_PYTHON:-python3}
site=/tmp/gpu-site
for folder in ${GPU_CHECK_WHEELS:-}; do
  [ -d "$folder" ] || continue
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$folder"/*.whl \
    || echo "gpu_check: installing the wheels of $folder failed"
done
[ -d "$site" ] && export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 PATH="$PATH:/usr/sbin"
if [ -n "${GPU_CHECK_DEBS:-}" ] && [ -d "$GPU_CHECK_DEBS" ]; then
  debs=/tmp/gpu-debs
  for deb in "$GPU_CHECK_DEBS"/*.deb; do dpkg-deb -x "$deb" "$debs"; done
  libs="$debs/lib/x86_64-linux-gnu:$debs/usr/lib/x86_64-linux-gnu"
  if [ ! -x /usr/bin/bwrap ]; then
    install -m 755 "$debs/usr/bin/bwrap" /usr/bin/bwrap  # needs only libc, libcap, libselinux
  fi
  if ! command -v mkfs.ext4 >/dev/null; then
    printf '#!/bin/bash\nLD_LIBRARY_PATH=%s exec -a mkfs.ext4 %s "$@"\n' "$libs" "$debs/sbin/mke2fs" >/usr/sbin/mkfs.ext4
    chmod 755 /usr/sbin/mkfs.ext4
  fi
fi
status=0

echo "== 1. the device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
"$py" - <<'PY' 2>&1 | tee "$out/torch.txt"
import os, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)
print("cuda available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
if torch.cuda.is_available():
    print("device 0", torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory // 2**30, "GiB")
print("LD_LIBRARY_PATH", os.environ.get("LD_LIBRARY_PATH", ""))
PY
ls -l /dev/nvidia* 2>&1 | head -8
for tool in bwrap setpriv mkfs.ext4 losetup timeout; do printf '%s: %s\n' "$tool" "$(command -v "$tool" || echo missing)"; done

echo "== 2. the CUDA tests"
DJANGO_SETTINGS_MODULE=deploy.test_settings timeout -k 10 300 "$py" -m pytest -p no:cacheprovider -q -rs -m gpu \
  tests/retrieval tests/grading/test_bundles_gpu.py --junitxml "$out/gpu-tests.xml" 2>&1 | tee "$out/gpu-tests.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

echo "== 3. scan speed, search latency, build, quality on CUDA"
timeout -k 10 300 "$py" bench/retrieval.py --device cuda --threads "${GPU_CHECK_THREADS:-8}" \
  --build-videos "${GPU_CHECK_BUILD_VIDEOS:-200}" --train-videos 80 --test-videos 30 --train-seconds 20 \
  --json "$out/retrieval.json" 2>&1 | tee "$out/retrieval.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

echo "gpu_check: $([ $status = 0 ] && echo passed || echo 'a part FAILED (see above)')"
exit $status
