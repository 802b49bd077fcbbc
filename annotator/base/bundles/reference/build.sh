#!/bin/sh
# FrameLedger's reference moment-search system (the repository's retrieval/ package) as a
# bundle of the seed's contract: build.sh --corpus DIR --index-dir DIR.
# The text encoder is named in encoder.txt next to this file (default: hash, which only
# fits the synthetic and test corpora; a real CLIP corpus needs a precomputed:… or
# python:… encoder, see docs/retrieval.md). A corpus without readable features gets the
# documented fallback (fallback.py: the middle third of each video on its grid).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
encoder=hash
if [ -f "$here/encoder.txt" ]; then encoder=$(cat "$here/encoder.txt"); fi
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
if python -m retrieval build "$@" --encoder "$encoder" --threads 1; then exit 0; fi
echo "retrieval build failed: the index falls back to the middle third of every video" >&2
exec python "$here/fallback.py" build "$@"
