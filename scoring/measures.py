"""The F1 the scorers report, in one place: ``egocentric`` rewards with it, ``tennis``
reports the identity, shot and detail F1 of its details with it.

``2.0 * precision * recall / (precision + recall)``, evaluated left to right, as the
published verifiers do (``2 * precision`` and ``2.0 * precision`` are the same float
operation), and 0.0 when both are zero.
"""


def f1(precision: float, recall: float) -> float:
    """The harmonic mean of ``precision`` and ``recall``; 0.0 when both are zero."""
    return 2.0 * precision * recall / (precision + recall) if precision + recall else 0.0
