"""Moment retrieval over frozen CLIP frame features (torch; CUDA when present).

Public API, for the web app and the command line:

* :class:`MomentPredictor` (``predict``, ``rank``, ``fallback``) and
  :class:`RetrievalConfig`, :class:`Prediction` — the inference facade;
* :func:`build_index`, :class:`FeatureIndex` — the feature store;
* :class:`Grid` — grid maths (legal intervals, closed-form grid-optimal interval);
* :func:`l2_normalize` — the one normalisation of build and query paths;
* :class:`TextEncoder`, :class:`HashTextEncoder`, :class:`PrecomputedTextEncoder`,
  :func:`load_encoder` — text encoders;
* :class:`TemporalHead`, :class:`Trainer`, :class:`TrainConfig` — the optional head;
* :func:`resolve_device`.
"""

from retrieval.device import resolve_device
from retrieval.encoders import HashTextEncoder, PrecomputedTextEncoder, TextEncoder, load_encoder
from retrieval.features import l2_normalize
from retrieval.grid import Grid, GridError, iou
from retrieval.head import MAX_PARAMETERS, HeadConfig, TemporalHead
from retrieval.predictor import MomentPredictor, Prediction, RetrievalConfig
from retrieval.store import FeatureIndex, UnknownVideoError, build_index
from retrieval.train import TrainConfig, Trainer

__all__ = [
    "MAX_PARAMETERS",
    "FeatureIndex",
    "Grid",
    "GridError",
    "HashTextEncoder",
    "HeadConfig",
    "MomentPredictor",
    "Prediction",
    "PrecomputedTextEncoder",
    "RetrievalConfig",
    "TemporalHead",
    "TextEncoder",
    "TrainConfig",
    "Trainer",
    "UnknownVideoError",
    "build_index",
    "iou",
    "l2_normalize",
    "load_encoder",
    "resolve_device",
]
