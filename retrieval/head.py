"""The optional trainable temporal/scoring head (at most 5,000,000 parameters).

Per request it reads the video's normalised segment features and the normalised
query vector and produces, on the video's grid,

* a relevance logit per segment and a start and an end logit per grid point; their
  prefix sums give every interval a log-likelihood that :mod:`retrieval.scan` scores
  exhaustively (coarse stage);
* a quality logit for each of at most 64 candidate intervals (fine stage), from the
  pooled hidden states inside and around the interval.

Architecture: a bilinear query-video fusion (``proj_v(x) * proj_q(q)`` plus a
projection of the cosine similarity and its within-video z-score), a stack of dilated
residual 1-D convolutions along time, and small output layers.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F

MAX_PARAMETERS = 5_000_000
#: Per-candidate scan scores given to fine scoring (zero-shot and likelihood).
N_RANK_FEATURES = 2


@dataclass(frozen=True)
class HeadConfig:
    dim: int = 512
    hidden: int = 128
    layers: int = 4
    kernel: int = 3
    dropout: float = 0.0
    separable: bool = True  # depthwise + pointwise convolutions (about 3x fewer FLOPs)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class HeadOutput:
    hidden: torch.Tensor  # N x h
    segment_logits: torch.Tensor  # N
    start_logits: torch.Tensor  # G
    end_logits: torch.Tensor  # G
    prefix: torch.Tensor  # G x h, prefix sums of ``hidden``


class _ConvBlock(nn.Module):
    def __init__(self, hidden: int, kernel: int, dilation: int, dropout: float, separable: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        padding = dilation * (kernel - 1) // 2
        self.conv: nn.Module
        if separable:
            self.conv = nn.Sequential(
                nn.Conv1d(hidden, hidden, kernel, padding=padding, dilation=dilation, groups=hidden),
                nn.Conv1d(hidden, hidden, 1),
            )
        else:
            self.conv = nn.Conv1d(hidden, hidden, kernel, padding=padding, dilation=dilation)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x``: B x N x h, ``mask``: B x N x 1 (1 on real segments)."""
        y = (F.gelu(self.norm(x)) * mask).transpose(1, 2)
        return x + self.drop(self.conv(y).transpose(1, 2))


class TemporalHead(nn.Module):
    def __init__(self, config: HeadConfig | None = None) -> None:
        super().__init__()
        cfg = config or HeadConfig()
        self.config = cfg
        h = cfg.hidden
        self.video_proj = nn.Linear(cfg.dim, h)
        self.query_proj = nn.Linear(cfg.dim, h)
        self.sim_proj = nn.Linear(2, h)
        self.blocks = nn.ModuleList(
            _ConvBlock(h, cfg.kernel, 2**i, cfg.dropout, cfg.separable) for i in range(cfg.layers)
        )
        self.out_norm = nn.LayerNorm(h)
        self.segment_out = nn.Linear(h, 1)
        self.boundary_out = nn.Conv1d(h, 2, kernel_size=2)
        n_interval = 3 * h + 3 + N_RANK_FEATURES
        self.interval_mlp = nn.Sequential(nn.Linear(n_interval, h), nn.GELU(), nn.Linear(h, 1))
        # Fine scoring starts as the zero-shot ranking (a linear skip that reads the
        # relative zero-shot score) and learns corrections on top of it.
        self.interval_skip = nn.Linear(N_RANK_FEATURES, 1)
        with torch.no_grad():
            last = cast(nn.Linear, self.interval_mlp[-1])
            last.weight.zero_()
            last.bias.zero_()
            self.interval_skip.weight.zero_()
            self.interval_skip.weight[0, 0] = 4.0
            self.interval_skip.bias.fill_(-2.0)

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def forward(self, segments: torch.Tensor, query: torch.Tensor) -> HeadOutput:
        """``segments``: N x dim, ``query``: dim, both L2-normalised."""
        n = segments.shape[0]
        return self.forward_batch(segments[None], query[None], [n])[0]

    def forward_batch(self, segments: torch.Tensor, queries: torch.Tensor, lengths: list[int]) -> list[HeadOutput]:
        """Padded batch: ``segments`` B x N x dim, ``queries`` B x dim, real lengths.

        Padded positions are zeroed before every convolution, so each example's
        outputs equal those of :meth:`forward` on that example alone.
        """
        b, n, _ = segments.shape
        lengths_t = torch.as_tensor(lengths, device=segments.device)
        mask = (torch.arange(n, device=segments.device)[None, :] < lengths_t[:, None]).to(segments.dtype)
        count = lengths_t.to(segments.dtype).clamp_min(1)
        sim = torch.einsum("bnd,bd->bn", segments, queries) * mask
        mean = sim.sum(1) / count
        var = (((sim - mean[:, None]) * mask) ** 2).sum(1) / count
        z = (sim - mean[:, None]) / var.sqrt().clamp_min(1e-4)[:, None] * mask
        x = self.video_proj(segments) * self.query_proj(queries)[:, None, :]
        x = x + self.sim_proj(torch.stack([sim * 10, z], dim=2))
        m3 = mask[:, :, None]
        for block in self.blocks:
            x = block(x, m3)
        x = self.out_norm(x) * m3
        boundary = self.boundary_out(F.pad(x.transpose(1, 2), (1, 1)))  # B x 2 x (N + 1)
        seg = self.segment_out(x).squeeze(2)
        outs = []
        for i, length in enumerate(lengths):
            hidden = x[i, :length]
            prefix = torch.zeros(length + 1, hidden.shape[1], dtype=x.dtype, device=x.device)
            prefix[1:] = torch.cumsum(hidden, dim=0)
            outs.append(
                HeadOutput(hidden, seg[i, :length], boundary[i, 0, : length + 1], boundary[i, 1, : length + 1], prefix)
            )
        return outs

    def interval_logits(
        self,
        out: HeadOutput,
        starts: torch.Tensor,
        ends: torch.Tensor,
        times: torch.Tensor,
        rank_features: torch.Tensor,
    ) -> torch.Tensor:
        """Quality logits of intervals ``[times[starts], times[ends]]`` (grid indices);
        ``rank_features`` (K x 2) are the candidates' relative scan scores."""
        n = out.hidden.shape[0]
        starts = starts.long()
        ends = ends.long()
        count = (ends - starts).clamp_min(1)
        width = (count // 2).clamp_min(1)
        left = (starts - width).clamp_min(0)
        right = (ends + width).clamp_max(n)
        p = out.prefix

        def pooled(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return (p[b] - p[a]) / (b - a).clamp_min(1).unsqueeze(1).to(p.dtype)

        seg_prefix = torch.zeros(n + 1, dtype=out.segment_logits.dtype, device=p.device)
        seg_prefix[1:] = torch.cumsum(out.segment_logits, 0)
        inside_logit = (seg_prefix[ends] - seg_prefix[starts]) / count.to(p.dtype)
        length = (times[ends] - times[starts]).to(p.dtype).clamp_min(1e-3)
        scalars = torch.stack(
            [torch.log(length) / math.log(60.0), inside_logit, out.start_logits[starts] + out.end_logits[ends]],
            dim=1,
        )
        feats = torch.cat(
            [pooled(starts, ends), pooled(left, starts), pooled(ends, right), scalars, rank_features], dim=1
        )
        return (self.interval_mlp(feats) + self.interval_skip(rank_features)).squeeze(1)


def save_head(head: TemporalHead, path: str | os.PathLike[str], extra: dict | None = None) -> None:
    torch.save({"config": head.config.to_dict(), "state_dict": head.state_dict(), **(extra or {})}, path)


def load_head(path: str | os.PathLike[str], device: torch.device | str = "cpu") -> TemporalHead:
    """Load a head from a checkpoint. A training checkpoint gives the weights that did
    best on its held-out examples, else its averaged (EMA) weights."""
    blob = torch.load(path, map_location=device, weights_only=True)
    head = TemporalHead(HeadConfig(**blob["config"]))
    head.load_state_dict(blob.get("best") or blob.get("ema") or blob.get("state_dict") or blob["model"])
    head.to(device)
    head.eval()
    return head
