"""``python -m scoring``: see :mod:`scoring.cli`."""

import gc

gc.disable()

from .cli import main  # noqa: E402

raise SystemExit(main())
