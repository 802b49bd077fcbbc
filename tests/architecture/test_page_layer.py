"""The pages live in the page modules with one URL module: every page URL of the site
resolves to a view of ``frontend.pages`` or of a ``frontend.pages_<topic>`` module, and
``frontend.urls`` includes nothing."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver

import frontend.urls


def _page_patterns():
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and entry.urlconf_module is frontend.urls:
            return entry.url_patterns
    raise LookupError("frontend.urls is not included at the root")


def test_every_page_is_a_view_of_frontend_pages():
    patterns = _page_patterns()
    assert all(isinstance(p, URLPattern) for p in patterns), "frontend.urls includes another URL module"
    modules = {p.name: p.callback.__module__ for p in patterns if p.name not in {"login", "logout"}}
    assert len(modules) >= 21
    assert {m for m in modules.values() if m != "frontend.pages" and not m.startswith("frontend.pages_")} == set()
    assert {"frontend.pages", "frontend.pages_people", "frontend.pages_projects", "frontend.pages_imports",
            "frontend.pages_taskkinds"} <= set(modules.values())  # fmt: skip
    assert modules["task-kinds"] == "frontend.pages_taskkinds"
