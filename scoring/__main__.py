"""``python -m scoring``: see :mod:`scoring.cli`.

A command-line call parses its inputs, writes its files and exits: it creates no
reference cycles worth collecting, so the cyclic collector is off for the whole
process, and the objects alive at the end are frozen so that the collection the
interpreter runs at exit has nothing to examine (they are still freed as it tears
the modules down; files are closed by then). The library imported by the app or a
worker leaves the collector alone.
"""

import gc

gc.disable()

from .cli import main  # noqa: E402

status = main()
gc.freeze()
raise SystemExit(status)
