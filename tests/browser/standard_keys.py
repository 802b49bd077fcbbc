"""Moving through a page with the standard keys only (Tab, Shift+Tab), and what the focus
looks like where it lands: shared by the keyboard-only tests of issue 43."""

from __future__ import annotations

from tests.browser.real_keys import RealKeyboard

# What the focused element is and whether a person can see it: drawn with a size inside the
# viewport, not in a hidden part of the page, and marked by a focus style (an outline or a
# ring), on itself or on the box that shows its focus (the items grid's scroll box).
FOCUS_JS = """() => {
  const a = document.activeElement;
  if (!a || a === document.body || a === document.documentElement) {
    return { tag: a ? a.tagName : null, visible: false, ring: false };
  }
  const box = a.getBoundingClientRect();
  const inView = box.width > 0 && box.height > 0 && box.bottom > 0 && box.right > 0
    && box.top < innerHeight && box.left < innerWidth;
  const hidden = Boolean(a.closest('[hidden], dialog:not([open])')) || getComputedStyle(a).visibility === 'hidden';
  const drawn = (n) => { const s = getComputedStyle(n);
    return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'; };
  const holder = a.closest('.table-scroll');
  return {
    tag: a.tagName, id: a.id, cls: a.className, name: a.name || null, value: a.value ?? null,
    visible: inView && !hidden, ring: drawn(a) || Boolean(holder && drawn(holder)),
  };
}"""


def focused(page) -> dict:
    return page.evaluate(FOCUS_JS)


def assert_focus_visible(page, selector: str) -> None:
    """The focus is on ``selector`` and a person sees it there."""
    page.wait_for_function("(s) => document.activeElement && document.activeElement.matches(s)", arg=selector)
    shown = focused(page)
    assert shown["visible"] and shown["ring"], f"the focus on {selector} is not visible: {shown}"


def tab_to(keys: RealKeyboard, selector: str, *, back: bool = False, limit: int = 60) -> int:
    """Tab (Shift+Tab with ``back``) until the focus is on ``selector``; returns the presses."""
    page = keys.page
    for count in range(1, limit + 1):
        keys.press("Shift+Tab" if back else "Tab")
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return count
    raise AssertionError(f"{limit} {'Shift+Tab' if back else 'Tab'} presses never reached {selector}: {focused(page)}")


def wait_focus(page, selector: str, timeout: float = 10000) -> None:
    """Until the focus is on ``selector``; on a time-out the failure says where it is."""
    try:
        page.wait_for_function(
            "(s) => document.activeElement && document.activeElement.matches(s)", arg=selector, timeout=timeout
        )
    except Exception as error:  # playwright's TimeoutError: say where the focus is instead
        notice = page.evaluate("document.querySelector('#notice')?.textContent ?? null")
        where = focused(page)
        raise AssertionError(f"the focus never reached {selector}: it is on {where}; notice {notice!r}") from error
