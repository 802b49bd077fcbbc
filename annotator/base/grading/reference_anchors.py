"""Calibration rows of moment versions beyond ``python -m scoring anchors``: a
constant-window prior and the repository's retrieval system (zero-shot ranker).

Both are scored with the version's scorer and parameters, like any submission. They are
reference points, not expectations: their rows have ``expected: None`` and never block
readiness. The retrieval row needs the packet's frame features (``params.features``);
without them, or when the text encoder cannot be loaded, the row says why and has no
reward.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from scoring.moments import corpus_grids, encode_rows

CONSTANT_WINDOW = (1 / 3, 2 / 3)


def _row(name: str, reward, description: str) -> dict:
    return {"name": name, "reward": reward, "description": description, "expected": None, "ok": None}


def _nearest(grid: Sequence[float], value: float) -> float:
    return min(grid, key=lambda point: abs(point - value))


def constant_window_rows(requests: Sequence[dict], params: dict) -> bytes:
    """Every query answered with the middle third of its video, snapped to the grid."""
    grids = corpus_grids(params["corpus"])
    rows = []
    for request in requests:
        grid = grids.get(request["video_id"]) or []
        if len(grid) < 2:
            continue
        span = grid[-1] - grid[0]
        start = _nearest(grid, grid[0] + CONSTANT_WINDOW[0] * span)
        end = _nearest(grid, grid[0] + CONSTANT_WINDOW[1] * span)
        if end <= start:
            start, end = grid[0], grid[1]
        rows.append({"query_id": request["query_id"], "start": start, "end": end})
    return encode_rows(rows)


def zero_shot_rows(records: Sequence[dict], features: dict[str, Path], requests: Sequence[dict], encoder: str) -> bytes:
    """The retrieval module's zero-shot ranker on the packet's features (its own index,
    built in a temporary folder, CPU, one thread)."""
    import torch

    from retrieval import MomentPredictor, build_index, load_encoder

    folder = Path(tempfile.mkdtemp(prefix="reference-anchor-"))
    try:
        corpus = folder / "corpus"
        corpus.mkdir()
        for name, source in features.items():
            (corpus / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, corpus / name)
        (corpus / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        build_index(corpus, folder / "index", encoder_spec=load_encoder(encoder).spec(), log=lambda message: None)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            predictor = MomentPredictor.from_index_dir(folder / "index", device="cpu", use_head=False)
            rows = [
                predictor.predict(r["video_id"], r["description"], query_id=r["query_id"]).row(r["query_id"])
                for r in requests
            ]
        finally:
            torch.set_num_threads(threads)
        return encode_rows(rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def reference_rows(
    run: Callable[[bytes], float],
    records: Sequence[dict],
    features: dict[str, Path],
    requests: Sequence[dict],
    params: dict,
    *,
    encoder: str,
) -> list[dict]:
    """The extra anchor rows; ``run`` scores submission bytes to a reward."""
    rows = [
        _row(
            "constant_window_prior",
            run(constant_window_rows(requests, params)),
            "the middle third of the video, on the grid, for every query",
        )
    ]
    name = "retrieval_zero_shot"
    if not features:
        rows.append(_row(name, None, "not computed: the packet has no frame features (params.features)"))
        return rows
    started = time.perf_counter()
    try:
        data = zero_shot_rows(records, features, requests, encoder)
    except Exception as error:  # the encoder or the features: recorded, never raised
        rows.append(_row(name, None, f"not computed: {type(error).__name__}: {error}"))
        return rows
    seconds = time.perf_counter() - started
    description = f"retrieval's zero-shot ranker (text encoder {encoder}, CPU, {seconds:.1f} s)"
    rows.append(_row(name, run(data), description))
    return rows
