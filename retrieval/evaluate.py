"""Light evaluation used inside the build (validation gate) and by benchmarks.

The official metric is ``moment-utility-v1`` in the ``scoring`` library; this module
only needs mean best IoU to compare two rankers on a handful of labelled examples.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.grid import best_iou
from retrieval.predictor import MomentPredictor
from retrieval.train import TrainingExample


def mean_best_iou(predictor: MomentPredictor, examples: Sequence[TrainingExample]) -> float:
    """Mean over examples of the predicted interval's best IoU with the labels."""
    if not examples:
        return 0.0
    total = 0.0
    for ex in examples:
        pred = predictor.predict(ex.video_id, embedding=ex.embedding)
        total += best_iou((pred.start, pred.end), ex.intervals)
    return total / len(examples)
