"""axe-core (npm, pinned in package.json, installed by ``bin/setup-js``) run in the page.

The script is evaluated through the DevTools protocol (``page.evaluate``), which the
page's Content-Security-Policy does not govern: nothing is added to the page's own markup
and nothing is downloaded while the test runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

RUN_JS = """async (tags) => {
    const result = await window.axe.run(document, {
        runOnly: { type: "tag", values: tags },
        resultTypes: ["violations"],
    });
    return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
    }));
}"""


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run bin/setup-js (npm ci installs axe-core beside ESLint)")
    return AXE.read_text()


def violations(page, tags: list[str] = WCAG_AA) -> list[str]:
    """Every axe-core violation of ``tags`` on the page as it is now, one line per node:
    ``rule (impact): help — selector — why``. Empty when the page passes."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    found = page.evaluate(RUN_JS, tags)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {n['target']} — {' '.join(n['summary'].split())}"
        for v in found
        for n in v["nodes"]
    ]
