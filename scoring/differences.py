"""The distribution of a list of differences (boundary deltas, shot-count differences),
as the agreement report and the timeline diagnostics both show it."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from ._annotations import Any


def distribution(values: Sequence[float]) -> dict[str, Any]:
    """Count, mean, median, largest absolute value and a histogram of differences."""
    if not values:
        return {"count": 0, "mean": None, "median": None, "max_abs": None, "histogram": {}}
    histogram = Counter(values)
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "max_abs": max(abs(v) for v in values),
        "histogram": {str(k): histogram[k] for k in sorted(histogram)},
    }
