"""One adapter per task family (see ``annotator.base.families.base``); the three built-in
families register here. A new family adds a module with its adapter and one line below
(``docs/adding-a-task-kind.md``)."""

from annotator.base.families.actions import ActionsAdapter
from annotator.base.families.base import (
    FamilyAdapter,
    UnknownFamily,
    adapter_for,
    adapter_for_scorer,
    browser_schema,
    family_names,
    register_adapter,
    unregister_adapter,
)
from annotator.base.families.break_points import BreakPointsAdapter
from annotator.base.families.moments import MomentsAdapter

for _adapter in (ActionsAdapter(), BreakPointsAdapter(), MomentsAdapter()):
    register_adapter(_adapter)

__all__ = [
    "FamilyAdapter",
    "UnknownFamily",
    "adapter_for",
    "adapter_for_scorer",
    "browser_schema",
    "family_names",
    "register_adapter",
    "unregister_adapter",
]
