"""``python -m scoring``: see :mod:`scoring.cli`."""

from .cli import main

raise SystemExit(main())
