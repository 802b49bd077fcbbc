"""Template context for every page: whether to show the maintainers' navigation."""

from __future__ import annotations

from annotator.reads import access


def nav(request) -> dict:
    user = getattr(request, "user", None)
    return {"is_maintainer_nav": bool(user is not None and access.is_maintainer(user))}
