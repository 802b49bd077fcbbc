"""One window of a long list a page shows (people, projects): ``size`` rows of the page asked
for, with the total the database counts over every row, so a page's cost does not grow with
the list and nothing is cut without saying so."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

WINDOW = 100


@dataclass(frozen=True)
class Window:
    rows: list
    total: int
    page: int
    pages: int
    size: int

    @property
    def windowed(self) -> bool:
        return self.pages > 1

    @property
    def first(self) -> int:
        """The 1-based number of the window's first row (0 when there is none)."""
        return (self.page - 1) * self.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return (self.page - 1) * self.size + len(self.rows)


def window_of(rows: QuerySet, page: int | None, size: int = WINDOW) -> Window:
    """The ``page``-th window (1-based; past the last: the last) of the ordered ``rows``."""
    total = rows.count()
    pages = max(1, -(-total // size))
    page = min(max(1, page or 1), pages)
    return Window(list(rows[(page - 1) * size : page * size]), total, page, pages, size)
