"""``Any`` for annotations, without importing ``typing`` on the score path.

Type checkers read ``TYPE_CHECKING`` as true and see ``typing.Any``; at run time the
name is ``object`` (annotations of these modules are evaluated, and describe, nothing
more). The modules a ``score`` call loads import ``Any`` from here.
"""

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any as Any
else:
    Any = object
