"""The reference system's documented fallback for a corpus without readable features:
every request gets the middle third of its video on the grid (``retrieval``'s own
``fallback_interval``), the same rows as the ``constant_window_prior`` calibration anchor.

``fallback.py build --corpus DIR --index-dir DIR`` keeps the corpus records in the index;
``fallback.py run --index-dir DIR --queries FILE --output FILE`` writes one flushed row per
request (a request for an unknown video gets none)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from retrieval.predictor import fallback_interval
from retrieval.store import iter_records

MARKER = "fallback-records.jsonl"


def _options(argv: list[str]) -> dict[str, str]:
    return {argv[i].lstrip("-"): argv[i + 1] for i in range(0, len(argv) - 1) if argv[i].startswith("--")}


def build(options: dict[str, str]) -> None:
    corpus, index = Path(options["corpus"]), Path(options["index-dir"])
    index.mkdir(parents=True, exist_ok=True)
    records = corpus / "records.jsonl" if corpus.is_dir() else corpus
    shutil.copyfile(records, index / MARKER)
    print("retrieval: no readable features: every request gets the middle third of its video", file=sys.stderr)


def run(options: dict[str, str]) -> None:
    index = Path(options["index-dir"])
    grids = {record.video_id: record.grid for record in iter_records(index / MARKER)}
    with open(options["queries"], encoding="utf-8") as requests, open(options["output"], "w") as out:
        for line in requests:
            if not line.strip():
                continue
            request = json.loads(line)
            grid = grids.get(request.get("video_id"))
            if grid is None:
                continue
            a, b = fallback_interval(grid)
            start, end = grid.interval(a, b)
            out.write(json.dumps({"query_id": request["query_id"], "start": start, "end": end}) + "\n")
            out.flush()


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](_options(sys.argv[2:]))
