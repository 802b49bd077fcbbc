#!/bin/sh
# FrameLedger's reference moment-search system: run.sh --index-dir DIR --queries FILE --output FILE.
# One flushed row per request, so the rows written before a timeout count.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
exec python -m retrieval run "$@" --threads 1
