"""Screenshots at 1280×720 into ``artifacts/screens/`` (gitignored), for people to look at."""

from __future__ import annotations

from pathlib import Path

SCREENS = Path(__file__).resolve().parents[2] / "artifacts" / "screens"
VIEWPORT = {"width": 1280, "height": 720}


def shot(page, name: str, *, at: str | None = None) -> Path:
    """The viewport (1280×720), scrolled to ``at`` when given."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(VIEWPORT)
    page.evaluate("window.scrollTo(0, 0)")
    if at:
        page.locator(at).first.scroll_into_view_if_needed()
    path = SCREENS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
