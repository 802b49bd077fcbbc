"""The pages live in the page modules with one URL module: every page URL of the site
resolves to a view of a module of ``annotator.entry.pages``, and its ``urls`` includes
nothing."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver

import annotator.entry.pages.urls


def _page_patterns():
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and entry.urlconf_module is annotator.entry.pages.urls:
            return entry.url_patterns
    raise LookupError("annotator.entry.pages.urls is not included at the root")


def test_every_page_is_a_view_of_a_page_module():
    patterns = _page_patterns()
    assert all(isinstance(p, URLPattern) for p in patterns), "annotator.entry.pages.urls includes another URL module"
    modules = {p.name: p.callback.__module__ for p in patterns if p.name not in {"login", "logout"}}
    assert len(modules) >= 21
    assert {m for m in modules.values() if not m.startswith("annotator.entry.pages.")} == set()
    pages = {f"annotator.entry.pages.{topic}" for topic in ("site", "people", "projects", "imports", "taskkinds")}
    assert pages <= set(modules.values())
    assert modules["task-kinds"] == "annotator.entry.pages.taskkinds"
