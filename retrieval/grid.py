"""Time grids of the moment-search contract and the interval maths on them.

A grid is a strictly increasing list of time points (seconds). A legal answer is an
interval ``[t_a, t_b]`` with ``a < b``: both ends are grid points. Segment ``j`` is the
span ``[t_j, t_{j+1}]``; a video with ``G`` grid points has ``G - 1`` segments.

The corpus gives a grid either as an explicit list or as ``{"step": s}``, meaning
``0, s, 2s, ...`` up to the duration, with the duration itself appended as the last
point when it is not a multiple of ``s`` (SCORING.md section 3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

#: Two times closer than this are the same grid point (the scorer's tolerance).
GRID_TOLERANCE = 1e-6
#: Largest grid accepted, a 2-hour video on a 0.1 s grid is 72,001 points.
MAX_GRID_POINTS = 200_000


class GridError(ValueError):
    """A grid specification or an interval that cannot be used."""


def _clean(value: float) -> float:
    """Round away binary noise such as ``3 * 0.1 = 0.30000000000000004``."""
    return float(round(value, 9))


@dataclass(frozen=True, eq=False)
class Grid:
    """The grid points of one video.

    ``step`` is set when every point but possibly the last is ``k * step`` from the
    first one; the fast scoring path relies on it. ``spec`` is what the corpus said and
    is what the index stores.
    """

    times: np.ndarray
    step: float | None = None
    spec: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        times = np.array(self.times, dtype=np.float64)
        if times.ndim != 1 or times.size < 2:
            raise GridError("a grid needs at least two points")
        if times.size > MAX_GRID_POINTS:
            raise GridError(f"a grid has more than {MAX_GRID_POINTS} points")
        if not np.all(np.isfinite(times)):
            raise GridError("grid points must be finite")
        if not np.all(np.diff(times) > 0):
            raise GridError("grid points must be strictly increasing")
        times.setflags(write=False)
        object.__setattr__(self, "times", times)
        if self.step is None:
            object.__setattr__(self, "step", _detect_step(times))

    # construction -------------------------------------------------------------------
    @classmethod
    def from_step(cls, step: float, duration: float) -> Grid:
        step = float(step)
        duration = float(duration)
        if not (math.isfinite(step) and step > 0):
            raise GridError("grid step must be a positive number")
        if not (math.isfinite(duration) and duration > 0):
            raise GridError("duration must be a positive number")
        n = int(math.floor(duration / step + 1e-9))
        if n + 1 > MAX_GRID_POINTS:
            raise GridError(f"a grid has more than {MAX_GRID_POINTS} points")
        points = [_clean(k * step) for k in range(n + 1)]
        if duration - points[-1] > GRID_TOLERANCE:
            points.append(_clean(duration))
        if len(points) < 2:
            points = [0.0, _clean(duration)]
        return cls(np.asarray(points), step=step, spec={"step": step})

    @classmethod
    def from_points(cls, points: Sequence[float]) -> Grid:
        try:
            values = [float(p) for p in points]
        except (TypeError, ValueError) as exc:
            raise GridError("grid points must be numbers") from exc
        return cls(np.asarray(values), spec=values)

    @classmethod
    def from_spec(cls, spec: object, duration: float | None) -> Grid:
        """Build from a corpus ``grid`` value: a list of points or ``{"step": s}``."""
        if isinstance(spec, dict):
            if "step" not in spec:
                raise GridError("a grid object must have a 'step'")
            if duration is None:
                raise GridError("a step grid needs the video's duration")
            return cls.from_step(spec["step"], duration)
        if isinstance(spec, (list, tuple)):
            return cls.from_points(spec)
        raise GridError("grid must be a list of points or {'step': s}")

    # properties ---------------------------------------------------------------------
    @property
    def n_points(self) -> int:
        return int(self.times.size)

    @property
    def n_segments(self) -> int:
        return int(self.times.size - 1)

    @property
    def n_intervals(self) -> int:
        """Number of legal intervals, ``G * (G - 1) / 2``."""
        g = self.n_points
        return g * (g - 1) // 2

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    @property
    def span(self) -> float:
        return float(self.times[-1] - self.times[0])

    def segment_durations(self) -> np.ndarray:
        return np.diff(self.times)

    def to_spec(self) -> object:
        if self.spec is not None:
            return self.spec
        return [float(t) for t in self.times]

    # lookups --------------------------------------------------------------------------
    def index_of(self, t: float, tol: float = GRID_TOLERANCE) -> int | None:
        """Index of the grid point equal to ``t`` within ``tol``, else ``None``."""
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
            return None
        i = int(np.searchsorted(self.times, t))
        for j in (i - 1, i):
            if 0 <= j < self.n_points and abs(self.times[j] - t) <= tol:
                return j
        return None

    def nearest_index(self, t: float) -> int:
        i = int(np.searchsorted(self.times, t))
        if i <= 0:
            return 0
        if i >= self.n_points:
            return self.n_points - 1
        return i if self.times[i] - t < t - self.times[i - 1] else i - 1

    def is_legal(self, start: object, end: object) -> bool:
        a = self.index_of(start)  # type: ignore[arg-type]
        b = self.index_of(end)  # type: ignore[arg-type]
        return a is not None and b is not None and a < b

    def interval(self, a: int, b: int) -> tuple[float, float]:
        if not (0 <= a < b < self.n_points):
            raise GridError(f"({a}, {b}) is not a legal pair of grid indices")
        return float(self.times[a]), float(self.times[b])

    def best_interval(self, targets: Iterable[Sequence[float]]) -> tuple[float, int, int]:
        """Closed-form grid-optimal interval: ``(best IoU, a, b)`` over the targets.

        For a target ``[s, e]`` the best start is one of the two grid points around
        ``s`` and the best end one of the two around ``e`` (IoU is monotone in each end
        on either side), so four candidates per target suffice.
        """
        best = (0.0, 0, 1)
        for target in targets:
            s, e = float(target[0]), float(target[1])
            if not (math.isfinite(s) and math.isfinite(e)) or e <= s:
                continue
            for a in _neighbours(self.times, s):
                for b in _neighbours(self.times, e):
                    if a < b:
                        x = iou((self.times[a], self.times[b]), (s, e))
                        if x > best[0]:
                            best = (x, a, b)
        return best


def _neighbours(times: np.ndarray, t: float) -> tuple[int, ...]:
    i = int(np.searchsorted(times, t))
    return tuple(j for j in (i - 1, i) if 0 <= j < times.size)


def _detect_step(times: np.ndarray) -> float | None:
    """The uniform step of ``times[:-1]`` (and of the last gap, or a shorter one)."""
    if times.size < 3:
        return float(times[1] - times[0])
    step = float(times[1] - times[0])
    body = times[:-1]
    expected = body[0] + step * np.arange(body.size)
    if np.max(np.abs(body - expected)) > GRID_TOLERANCE:
        return None
    last = float(times[-1] - times[-2])
    return step if last <= step + GRID_TOLERANCE else None


def iou(pred: Sequence[float], target: Sequence[float]) -> float:
    """Temporal IoU of two intervals; 0 when either is empty."""
    ps, pe = float(pred[0]), float(pred[1])
    ts, te = float(target[0]), float(target[1])
    if pe <= ps or te <= ts:
        return 0.0
    inter = max(0.0, min(pe, te) - max(ps, ts))
    union = max(pe, te) - min(ps, ts)
    return inter / union if union > 0 else 0.0


def best_iou(pred: Sequence[float], targets: Iterable[Sequence[float]]) -> float:
    return max((iou(pred, t) for t in targets), default=0.0)
