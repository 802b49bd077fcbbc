"""Which calibration anchors must hold before a version may be marked ready."""

from __future__ import annotations

from collections.abc import Sequence

# An oracle that does not score 1.0, or an empty submission that does not score 0.0,
# means the ground truth, its parameters or the scorer are wrong for each other.
EXPECTED = {"oracle": 1.0, "empty": 0.0}
WHY = {
    "oracle": "the ground truth submitted as a solution must score 1.0",
    "empty": "an empty submission must score 0.0",
}


def anchor_rows(anchors: Sequence) -> list[dict]:
    """``scoring.Anchor`` rows as dicts, with the expectation and whether it holds."""
    rows = []
    for anchor in anchors:
        expected = EXPECTED.get(anchor.name)
        rows.append(
            {
                "name": anchor.name,
                "reward": anchor.reward,
                "description": anchor.description,
                "expected": expected,
                "ok": None if expected is None else anchor.reward == expected,
            }
        )
    return rows


def problems(rows: Sequence[dict]) -> list[str]:
    found = []
    names = {row["name"] for row in rows}
    for name in EXPECTED:
        if name not in names:
            found.append(f"anchor {name} is missing ({WHY[name]})")
    for row in rows:
        if row["ok"] is False:
            found.append(f"{row['name']} scores {row['reward']}, expected {row['expected']}: {WHY[row['name']]}")
    return found
