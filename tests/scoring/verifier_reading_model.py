"""A model of how the two published judges read and parse a solution file.

Run as a script, exactly as the judges are run (``python verifier_reading_model.py
LIST``): for every path listed in the file LIST (one per line, spelled as it would be
given to ``--solution``, which both judges parse with ``type=Path``) it prints one JSON
line ``{"egocentric": outcome, "tennis": outcome}``, where an outcome is ``["ok", value]``
(the parsed document, re-encoded) or ``["error", message]``. A line ``tennis<TAB>path``
is read by the tennis judge's step only (a FIFO: the egocentric step would open and close
it and take its writer's bytes).

The model makes the same standard-library calls as the judges, at the same call depth
below the script's module level (that depth is what sets how deep a document may nest:
the figures issue 11 measured, 992 and 994, come out of it):

* egocentric: ``os.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)``, ``fstat`` (a
  regular file, at most 2,000,000 bytes), ``os.fdopen(fd, encoding="utf-8")`` and
  ``json.load`` -- called as ``main -> load_prediction -> json.load``;
* tennis: ``json.loads(Path(path).read_text())`` -- called from ``main``.

It reads no repository code and is the reference of tests/scoring/test_fuzz_hostile_submissions.py.
Regular files, directories, missing paths, ``/dev/null`` and FIFOs whose writer writes
and closes are given to it; an endless device is not (it would exhaust its memory, as it
does the judge's).
"""

import json
import os
import stat
import sys
from pathlib import Path


def _encode(document):
    """The parsed document as canonical JSON (after the parse, with room to recurse)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        return json.dumps(document, sort_keys=True, allow_nan=True)
    finally:
        sys.setrecursionlimit(limit)


def load_prediction(path):
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        metadata = os.fstat(descriptor)
        if not stat.S_ISREG(metadata.st_mode):
            raise ValueError("solution must be a regular file")
        if metadata.st_size > 2_000_000:
            raise ValueError("solution exceeds 2000000 bytes")
        with os.fdopen(descriptor, encoding="utf-8") as solution:
            descriptor = -1
            document = json.load(solution)
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    return document


def main():
    for line in Path(sys.argv[1]).read_text().split("\n")[:-1]:
        kinds, _, line = line.rpartition("\t")
        outcome = {}
        if kinds != "tennis":
            try:
                outcome["egocentric"] = ["ok", _encode(load_prediction(Path(line)))]
            except Exception as error:  # noqa: BLE001 - the judge's own catch-all
                outcome["egocentric"] = ["error", f"{error}"]
        try:
            outcome["tennis"] = ["ok", _encode(json.loads(Path(line).read_text()))]
        except Exception as error:  # noqa: BLE001 - the judge's own catch-all
            outcome["tennis"] = ["error", f"{error}"]
        print(json.dumps(outcome))


if __name__ == "__main__":
    main()
