"""Training the temporal head within a time budget, with checkpoints and resume.

The budget counts training time over all runs (it is stored in the checkpoint), so a
resumed run only uses what is left. A run stops cleanly when the budget would be
exceeded by one more step, when ``max_steps`` is reached, or when a stop is requested
(SIGTERM/SIGINT in the command line); it always ends by writing the checkpoint.
All sampling uses one seeded ``torch.Generator`` saved in the checkpoint, so an
interrupted and resumed run on CPU follows the same trajectory as an uninterrupted one.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import cast

import numpy as np
import torch
from torch.nn import functional as F

from retrieval.device import resolve_device
from retrieval.encoders import TextEncoder
from retrieval.features import l2_normalize
from retrieval.fsutil import atomic_writer
from retrieval.grid import Grid, best_iou
from retrieval.head import MAX_PARAMETERS, HeadConfig, HeadOutput, TemporalHead
from retrieval.pipeline import rank_with_head, rank_zero_shot, scan_context
from retrieval.scan import DEFAULT_GAMMA
from retrieval.store import FeatureIndex

DEFAULT_BUDGET_S = 45 * 60.0


@dataclass(frozen=True)
class TrainConfig:
    budget_s: float = DEFAULT_BUDGET_S
    max_steps: int | None = None
    batch_size: int = 8
    lr: float = 2e-3
    weight_decay: float = 1e-4
    crop_segments: int = 512
    candidates: int = 32
    seed: int = 0
    checkpoint_every_s: float = 60.0
    min_lr_fraction: float = 0.1  # cosine decay to this fraction of lr over the budget
    ema_decay: float = 0.99  # inference uses an exponential moving average of the weights
    holdout_fraction: float = 0.15  # examples (whole videos) kept aside to pick the best weights
    eval_every_steps: int = 100
    gamma: float = DEFAULT_GAMMA


@dataclass(frozen=True)
class TrainingExample:
    query_id: str
    video_id: str
    embedding: np.ndarray
    intervals: tuple[tuple[float, float], ...]


@dataclass
class TrainResult:
    steps: int
    elapsed_s: float
    stopped: str
    checkpoint: Path
    parameter_count: int
    last_loss: float
    losses: list[float] = field(default_factory=list)
    best_score: float | None = None  # held-out mean IoU of the kept weights
    best_step: int | None = None
    zero_shot_score: float | None = None  # held-out mean IoU of the zero-shot ranker


def split_holdout(
    examples: Sequence[TrainingExample], fraction: float, seed: int
) -> tuple[list[TrainingExample], list[TrainingExample]]:
    """Keep whole videos aside (about ``fraction`` of the examples) for model selection."""
    videos = sorted({ex.video_id for ex in examples})
    if fraction <= 0 or len(examples) < 20 or len(videos) < 4:
        return list(examples), []
    order = np.random.default_rng(seed).permutation(len(videos))
    held: set[str] = set()
    count = 0
    for i in order:
        if count >= max(5, round(fraction * len(examples))):
            break
        held.add(videos[i])
        count += sum(ex.video_id == videos[i] for ex in examples)
    return [ex for ex in examples if ex.video_id not in held], [ex for ex in examples if ex.video_id in held]


def load_examples(
    path: str | os.PathLike,
    index: FeatureIndex,
    encoder: TextEncoder,
    warn: Callable[[str], None] | None = None,
) -> list[TrainingExample]:
    """Labelled rows ``{query_id, video_id, description, intervals}``; bad rows skipped."""
    warn = warn or (lambda msg: print(f"retrieval: {msg}", file=sys.stderr))
    examples = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                vid = row["video_id"]
                if vid not in index or not index.video(vid).features_ok:
                    raise ValueError(f"video {vid!r} not usable")
                intervals = tuple(
                    (float(s), float(e)) for s, e in row.get("intervals", row.get("relevant_windows", []))
                )
                intervals = tuple(iv for iv in intervals if math.isfinite(iv[0] + iv[1]) and iv[1] > iv[0])
                if not intervals:
                    raise ValueError("no usable interval")
                vec = encoder.encode(row.get("description", row.get("query", "")), query_id=str(row.get("query_id")))
                examples.append(
                    TrainingExample(str(row.get("query_id", line_no)), vid, l2_normalize(np.asarray(vec)), intervals)
                )
            except (ValueError, KeyError, TypeError) as exc:
                warn(f"{Path(path).name} line {line_no} skipped: {exc}")
    return examples


def interval_ious(starts: np.ndarray, ends: np.ndarray, targets: Sequence[tuple[float, float]]) -> np.ndarray:
    """Best IoU of each ``[starts[i], ends[i]]`` against the targets (vectorised)."""
    best = np.zeros(starts.shape, dtype=np.float64)
    for s, e in targets:
        inter = np.clip(np.minimum(ends, e) - np.maximum(starts, s), 0, None)
        union = np.maximum(ends, e) - np.minimum(starts, s)
        best = np.maximum(best, np.where(union > 0, inter / np.maximum(union, 1e-12), 0))
    return best


def _coverage(times: np.ndarray, targets: Sequence[tuple[float, float]]) -> np.ndarray:
    lo, hi = times[:-1], times[1:]
    cov = np.zeros(lo.shape)
    for s, e in targets:
        cov += np.clip(np.minimum(hi, e) - np.maximum(lo, s), 0, None) / (hi - lo)
    return cov / len(targets)


class _Stopper:
    def __init__(self, event: threading.Event | None, handle_signals: bool) -> None:
        self.event = event or threading.Event()
        self.reason = "stop_requested"
        self._old: dict = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._old[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.reason = "signal"
        self.event.set()

    def restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


class Trainer:
    """Trains a :class:`TemporalHead` on examples whose videos are in ``index``."""

    def __init__(
        self,
        index: FeatureIndex,
        examples: Sequence[TrainingExample],
        checkpoint: str | os.PathLike,
        *,
        head_config: HeadConfig | None = None,
        config: TrainConfig | None = None,
        device: str | torch.device = "auto",
        log: Callable[[str], None] | None = None,
        holdout: Sequence[TrainingExample] | None = None,
    ) -> None:
        if not examples:
            raise ValueError("no training examples")
        self.device = resolve_device(device)
        self.index = index
        self.config = config or TrainConfig()
        if holdout is None:
            self.examples, self.holdout = split_holdout(examples, self.config.holdout_fraction, self.config.seed)
        else:
            self.examples, self.holdout = list(examples), list(holdout)
        self.checkpoint = Path(checkpoint)
        self.log = log or (lambda msg: print(f"retrieval: {msg}", file=sys.stderr))
        self.head = TemporalHead(head_config or HeadConfig(dim=index.dim)).to(self.device)
        if self.head.parameter_count() > MAX_PARAMETERS:
            raise ValueError(f"head has {self.head.parameter_count()} parameters, limit {MAX_PARAMETERS}")
        self.optimizer = torch.optim.AdamW(
            self.head.parameters(), lr=self.config.lr, weight_decay=self.config.weight_decay
        )
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self.step = 0
        self.elapsed_s = 0.0
        self.gamma = self.config.gamma
        self.ema = {k: v.detach().clone() for k, v in self.head.state_dict().items()}
        self.best: dict | None = None
        self.best_score: float | None = None
        self.best_step: int | None = None
        self.zero_shot_score: float | None = None
        self.losses: list[float] = []
        self._videos: dict[str, tuple[torch.Tensor, Grid]] = {}

    # --------------------------------------------------------------- checkpoint
    def state(self) -> dict:
        return {
            "config": self.head.config.to_dict(),
            "model": self.head.state_dict(),
            "ema": self.ema,
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "elapsed_s": self.elapsed_s,
            "generator": self.generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "train_config": asdict(self.config),
            "losses": self.losses[-1000:],
            "best": self.best,
            "best_score": self.best_score,
            "best_step": self.best_step,
            "zero_shot_score": self.zero_shot_score,
        }

    def save(self) -> None:
        self.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(self.checkpoint) as fh:
            torch.save(self.state(), fh)

    def resume(self) -> bool:
        """Load the checkpoint if there is one; returns whether it did."""
        if not self.checkpoint.is_file():
            return False
        blob = torch.load(self.checkpoint, map_location=self.device, weights_only=True)
        if blob["config"] != self.head.config.to_dict():
            raise ValueError("checkpoint was trained with another head configuration")
        self.head.load_state_dict(blob["model"])
        self.ema = {k: v.to(self.device) for k, v in blob["ema"].items()}
        self.optimizer.load_state_dict(blob["optimizer"])
        self.step = int(blob["step"])
        self.elapsed_s = float(blob["elapsed_s"])
        self.generator.set_state(blob["generator"].cpu())
        torch.set_rng_state(blob["torch_rng"].cpu())
        self.losses = list(blob.get("losses", []))
        self.best = blob.get("best")
        self.best_score = blob.get("best_score")
        self.best_step = blob.get("best_step")
        self.zero_shot_score = blob.get("zero_shot_score")
        return True

    # ----------------------------------------------------------------- training
    def _video(self, video_id: str) -> tuple[torch.Tensor, Grid]:
        hit = self._videos.get(video_id)
        if hit is None:
            entry = self.index.video(video_id)
            feats = torch.from_numpy(self.index.segment_features(video_id)).to(self.device)
            hit = (feats, entry.grid)
            if sum(v[0].numel() for v in self._videos.values()) < 500_000_000:
                self._videos[video_id] = hit
        return hit

    def _randint(self, low: int, high: int) -> int:
        """Uniform integer in ``[low, high]`` from the saved generator."""
        return low + int(torch.randint(0, high - low + 1, (1,), generator=self.generator))

    def _crop(self, grid: Grid, ex: TrainingExample) -> tuple[int, int]:
        n = grid.n_segments
        size = self.config.crop_segments
        if n <= size:
            return 0, n
        _, a, b = grid.best_interval(ex.intervals)
        size = max(size, b - a + 8)
        lo = max(0, b - size)
        hi = min(a, n - size)
        c0 = self._randint(lo, max(lo, hi))
        return c0, min(n, c0 + size)

    def _prepare(self, ex: TrainingExample) -> tuple[torch.Tensor, np.ndarray]:
        feats, grid = self._video(ex.video_id)
        c0, c1 = self._crop(grid, ex)
        return feats[c0:c1], np.array(grid.times[c0 : c1 + 1])

    def example_loss(
        self, ex: TrainingExample, out: HeadOutput, similarity: torch.Tensor, times_np: np.ndarray
    ) -> torch.Tensor:
        """Loss of one example given the head's outputs on its crop."""
        crop_grid = Grid(times_np)
        cov = torch.from_numpy(_coverage(times_np, ex.intervals)).float().to(self.device)
        loss = F.binary_cross_entropy_with_logits(out.segment_logits, cov.clamp(0, 1))
        g = crop_grid.n_points
        start_t = torch.zeros(g, device=self.device)
        end_t = torch.zeros(g, device=self.device)
        best_a, best_b, found = 0, 1, 0
        for iv in ex.intervals:
            x, a, b = crop_grid.best_interval([iv])
            if x > 0:
                start_t[a] += 1
                end_t[b] += 1
                found += 1
                best_a, best_b = a, b
        if found:
            loss = loss + 0.5 * (
                -(F.log_softmax(out.start_logits, 0) * start_t / found).sum()
                - (F.log_softmax(out.end_logits, 0) * end_t / found).sum()
            )
        times = torch.from_numpy(times_np).to(self.device)
        with torch.no_grad():
            detached = HeadOutput(
                out.hidden.detach(),
                out.segment_logits.detach(),
                out.start_logits.detach(),
                out.end_logits.detach(),
                out.prefix.detach(),
            )
            ctx = scan_context(
                detached, similarity, times, times_np, gamma=self.gamma, step=crop_grid.step, k=self.config.candidates
            )
        jitter = torch.randint(-3, 4, (2, 8), generator=self.generator).numpy()
        rand = torch.randint(0, g, (2, 8), generator=self.generator).numpy()
        starts = np.concatenate([ctx.candidates.starts, best_a + jitter[0], rand.min(0)])
        ends = np.concatenate([ctx.candidates.ends, best_b + jitter[1], rand.max(0)])
        starts = np.clip(starts, 0, g - 2)
        ends = np.clip(np.maximum(ends, starts + 1), 1, g - 1)
        target = interval_ious(times_np[starts], times_np[ends], ex.intervals)
        starts_t = torch.from_numpy(starts).to(self.device)
        ends_t = torch.from_numpy(ends).to(self.device)
        with torch.no_grad():
            rank = ctx.rank_features(starts_t, ends_t)
        logits = self.head.interval_logits(out, starts_t, ends_t, times, rank)
        target_t = torch.from_numpy(target).float().to(self.device)
        loss = loss + F.binary_cross_entropy_with_logits(logits, target_t)
        if float(target_t.max()) > 0:  # listwise: put the candidates' mass on the best ones
            best = (target_t >= target_t.max() - 1e-6).float()
            loss = loss - (F.log_softmax(logits, 0) * best / best.sum()).sum()
        return loss

    @torch.no_grad()
    def holdout_iou(self, state: dict | None) -> float:
        """Mean best IoU on the held-out examples: of the head with ``state``, or of the
        zero-shot ranker when ``state`` is None (the inference pipeline, full videos)."""
        head = None
        if state is not None:
            head = TemporalHead(self.head.config).to(self.device)
            head.load_state_dict(state)
            head.eval()
        total = 0.0
        for ex in self.holdout:
            feats, grid = self._video(ex.video_id)
            query = torch.from_numpy(ex.embedding).to(self.device)
            times = torch.from_numpy(np.array(grid.times)).to(self.device)
            args = (feats, query, times, grid.times)
            if head is None:
                ranking = rank_zero_shot(*args, gamma=self.gamma, step=grid.step)
            else:
                ranking = rank_with_head(head, *args, gamma=self.gamma, step=grid.step)
            i = int(np.argmax(ranking.fine))
            pred = (grid.times[ranking.candidates.starts[i]], grid.times[ranking.candidates.ends[i]])
            total += best_iou(pred, ex.intervals)
        return total / max(1, len(self.holdout))

    def select(self) -> None:
        """Score the averaged weights on the held-out examples; keep them if best so far."""
        if not self.holdout:
            return
        if self.zero_shot_score is None:
            self.zero_shot_score = self.holdout_iou(None)
        score = self.holdout_iou(self.ema)
        if self.best_score is None or score > self.best_score:
            self.best = {k: v.detach().clone() for k, v in self.ema.items()}
            self.best_score, self.best_step = score, self.step
        self.log(
            f"step {self.step}: held-out mean IoU {score:.4f} (best {self.best_score:.4f} at step "
            f"{self.best_step}, zero-shot {self.zero_shot_score:.4f})"
        )

    def progress(self) -> float:
        """Fraction of training done: by steps when ``max_steps`` is set, else by time."""
        cfg = self.config
        if cfg.max_steps:
            return min(1.0, self.step / cfg.max_steps)
        return min(1.0, self.elapsed_s / cfg.budget_s) if cfg.budget_s > 0 else 1.0

    def learning_rate(self) -> float:
        """Cosine decay from ``lr`` to ``min_lr_fraction * lr`` over the run."""
        cfg = self.config
        low = cfg.min_lr_fraction
        return cfg.lr * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * self.progress())))

    @torch.no_grad()
    def _update_ema(self) -> None:
        decay = min(self.config.ema_decay, (1 + self.step) / (10 + self.step))
        for name, value in self.head.state_dict().items():
            if value.dtype.is_floating_point:
                self.ema[name].mul_(decay).add_(value.detach(), alpha=1 - decay)
            else:
                self.ema[name].copy_(value)

    def train_step(self) -> float:
        self.head.train()
        idx = torch.randint(0, len(self.examples), (self.config.batch_size,), generator=self.generator).tolist()
        batch = [self.examples[i] for i in idx]
        prepared = [self._prepare(ex) for ex in batch]
        lengths = [p[0].shape[0] for p in prepared]
        padded = torch.zeros(len(batch), max(lengths), self.index.dim, device=self.device)
        for i, (feats, _) in enumerate(prepared):
            padded[i, : lengths[i]] = feats
        queries = torch.from_numpy(np.stack([ex.embedding for ex in batch])).to(self.device)
        self.optimizer.zero_grad(set_to_none=True)
        outs = self.head.forward_batch(padded, queries, lengths)
        total = cast(
            torch.Tensor,
            sum(
                self.example_loss(ex, out, p[0] @ queries[i], p[1])
                for i, (ex, out, p) in enumerate(zip(batch, outs, prepared, strict=True))
            ),
        )  # a non-empty batch: a tensor
        loss = total / len(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.head.parameters(), 1.0)
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate()
        self.optimizer.step()
        self.step += 1
        self._update_ema()
        value = float(loss.detach())
        self.losses.append(value)
        return value

    def run(self, *, stop: threading.Event | None = None, handle_signals: bool = False) -> TrainResult:
        """Train until the budget, ``max_steps`` or a stop request; save; report."""
        stopper = _Stopper(stop, handle_signals)
        cfg = self.config
        self.log(
            f"training on {self.device}: {len(self.examples)} examples, step {self.step}, "
            f"{max(0.0, cfg.budget_s - self.elapsed_s):.0f} s of budget left"
        )
        started = time.monotonic()
        base_elapsed = self.elapsed_s
        last_save = started
        step_time = 0.0
        reason = "budget"
        try:
            while True:
                if cfg.max_steps is not None and self.step >= cfg.max_steps:
                    reason = "max_steps"
                    break
                if stopper.event.is_set():
                    reason = stopper.reason
                    break
                if self.elapsed_s + step_time > cfg.budget_s:
                    reason = "budget"
                    break
                t0 = time.monotonic()
                self.train_step()
                step_time = max(step_time * 0.9, time.monotonic() - t0)
                if cfg.eval_every_steps and self.step % cfg.eval_every_steps == 0:
                    self.select()
                self.elapsed_s = base_elapsed + (time.monotonic() - started)
                if time.monotonic() - last_save > cfg.checkpoint_every_s:
                    self.save()
                    last_save = time.monotonic()
        finally:
            stopper.restore()
        if reason != "signal" and self.step and self.best_step != self.step:
            self.select()
        self.elapsed_s = base_elapsed + (time.monotonic() - started)
        self.head.eval()
        self.save()
        self.log(f"training stopped ({reason}) after {self.step} steps, {self.elapsed_s:.1f} s")
        return TrainResult(
            self.step,
            self.elapsed_s,
            reason,
            self.checkpoint,
            self.head.parameter_count(),
            self.losses[-1] if self.losses else float("nan"),
            list(self.losses),
            self.best_score,
            self.best_step,
            self.zero_shot_score,
        )
