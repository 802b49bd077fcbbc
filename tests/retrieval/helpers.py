"""Quality with the project's scorer (``scoring``: ``moment-utility-v1``)."""

from __future__ import annotations

import json

from scoring import score_submission


def moment_quality(rows: list[dict], ground_truth: dict, records: list[dict]) -> dict:
    """``details`` of moment-utility-v1 for submission rows (raw_quality, per_source, ...)."""
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    return score_submission("moment-utility-v1", ground_truth, data, corpus=records).details


def ground_truth(queries: list[dict]) -> dict:
    keys = ("query_id", "video_id", "source", "intervals")
    return {"queries": [{k: q[k] for k in keys} for q in queries]}
