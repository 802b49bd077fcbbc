"""One request, from normalised vectors to a ranked list of at most 64 intervals.

Device-agnostic and index-free: the predictor (inference) and the trainer (which
needs the same candidates to learn fine scoring on) both call these functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from retrieval.head import HeadOutput, TemporalHead
from retrieval.scan import (
    MAX_FINE_CANDIDATES,
    Candidates,
    ScanTerms,
    interval_scores,
    likelihood_terms,
    merge_candidates,
    row_champions,
    select_candidates,
    zero_shot_terms,
)


@dataclass(frozen=True)
class Ranking:
    candidates: Candidates  # at most 64 intervals (grid indices)
    fine: np.ndarray  # fine score of each candidate, higher is better


def rank_zero_shot(
    segments: torch.Tensor,
    query: torch.Tensor,
    times: torch.Tensor,
    times_np: np.ndarray,
    *,
    gamma: float,
    step: float | None,
    k: int = MAX_FINE_CANDIDATES,
    nms_iou: float | None = None,
    block: int | None = None,
) -> Ranking:
    """Training-free ranking: the scan statistic of the cosine similarity."""
    terms = zero_shot_terms(segments @ query, times, gamma=gamma, step=step)
    cands = select_candidates(row_champions(terms, block=block), times_np, k=k, nms_iou=nms_iou)
    return Ranking(cands, cands.scores)


@dataclass(frozen=True)
class ScanContext:
    """Both exhaustive scans of one request and the candidates they propose."""

    zs_terms: ScanTerms
    ll_terms: ScanTerms
    zs_best: torch.Tensor
    ll_best: torch.Tensor
    candidates: Candidates

    def rank_features(self, starts: torch.Tensor, ends: torch.Tensor) -> torch.Tensor:
        """K x 2: zero-shot score relative to the best, likelihood gap to the best."""
        zs_rel = interval_scores(self.zs_terms, starts, ends) / self.zs_best.abs().clamp_min(1e-6)
        ll_rel = (interval_scores(self.ll_terms, starts, ends) - self.ll_best).clamp_min(-50.0) / 10.0
        return torch.stack([zs_rel, ll_rel], dim=1).float()


def scan_context(
    out: HeadOutput,
    similarity: torch.Tensor,
    times: torch.Tensor,
    times_np: np.ndarray,
    *,
    gamma: float,
    step: float | None,
    k: int = MAX_FINE_CANDIDATES,
    block: int | None = None,
) -> ScanContext:
    """Score every interval twice (head likelihood, zero-shot) and merge the best."""
    zs_terms = zero_shot_terms(similarity, times, gamma=gamma, step=step)
    ll_terms = likelihood_terms(out.segment_logits, out.start_logits, out.end_logits, times)
    zs_champ = row_champions(zs_terms, block=block)
    ll_champ = row_champions(ll_terms, block=block)
    cands = merge_candidates([ll_champ, zs_champ], times_np, k=k)
    return ScanContext(zs_terms, ll_terms, zs_champ.scores.max(), ll_champ.scores.max(), cands)


def rank_with_head(
    head: TemporalHead,
    segments: torch.Tensor,
    query: torch.Tensor,
    times: torch.Tensor,
    times_np: np.ndarray,
    *,
    gamma: float,
    step: float | None,
    k: int = MAX_FINE_CANDIDATES,
    block: int | None = None,
) -> Ranking:
    """Head ranking: exhaustive scans for candidates, the head's fine scores on them."""
    out = head(segments, query)
    ctx = scan_context(out, segments @ query, times, times_np, gamma=gamma, step=step, k=k, block=block)
    starts = torch.from_numpy(ctx.candidates.starts).to(times.device)
    ends = torch.from_numpy(ctx.candidates.ends).to(times.device)
    fine = head.interval_logits(out, starts, ends, times, ctx.rank_features(starts, ends))
    return Ranking(ctx.candidates, fine.float().cpu().numpy())
