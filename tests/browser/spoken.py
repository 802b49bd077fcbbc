"""What a screen reader would say of its own accord: every text a live region of the page
takes (``aria-live`` other than ``off``, ``role=status``/``alert``/``log``, and ``<output>``,
which is a live region unless marked ``aria-live=off``), recorded by a MutationObserver
in the page from the moment ``listen`` is called."""

from __future__ import annotations

LISTEN_JS = """() => {
    window.__flSpoken = [];
    const LIVE = '[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"], [role="log"],'
        + ' output:not([aria-live="off"])';
    const seen = new WeakMap();
    const record = (node) => {
        const element = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
        const region = element && element.closest(LIVE);
        if (!region) return;
        const text = region.textContent.replace(/\\s+/g, " ").trim();
        if (text && seen.get(region) !== text) window.__flSpoken.push(text);
        seen.set(region, text);
    };
    new MutationObserver((mutations) => mutations.forEach((m) => record(m.target)))
        .observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def listen(page) -> None:
    page.evaluate(LISTEN_JS)


def spoken(page) -> list[str]:
    return page.evaluate("() => window.__flSpoken.slice()")
