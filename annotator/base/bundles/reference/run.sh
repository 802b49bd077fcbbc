#!/bin/sh
# FrameLedger's reference moment-search system: run.sh --index-dir DIR --queries FILE --output FILE.
# One flushed row per request, so the rows written before a timeout count.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
index=""
prev=""
for arg in "$@"; do [ "$prev" = --index-dir ] && index=$arg; prev=$arg; done
if [ -f "$index/fallback-records.jsonl" ]; then exec python "$here/fallback.py" run "$@"; fi
exec python -m retrieval run "$@" --threads 1
