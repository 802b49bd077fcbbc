"""Command line: ``python -m retrieval {build,run,train,synth}``.

The two contract stages::

    python -m retrieval build --corpus DIR --index-dir DIR
    python -m retrieval run --index-dir DIR --queries Q.jsonl --output R.jsonl

``build`` writes only inside ``--index-dir``; ``run`` only reads the index and writes
the output file, the cache folder and temporary files under ``TMPDIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from retrieval.device import DEVICE_CHOICES, DeviceUnavailableError, resolve_device
from retrieval.encoders import EncoderError, load_encoder
from retrieval.head import HeadConfig
from retrieval.predictor import MomentPredictor, RetrievalConfig
from retrieval.scan import DEFAULT_GAMMA
from retrieval.store import HEAD_CHECKPOINT, FeatureIndex, IndexFormatError, build_index, set_manifest_head


def log(msg: str) -> None:
    print(f"retrieval: {msg}", file=sys.stderr, flush=True)


def resolve_cache_dir(arg: str | None) -> Path:
    """``--cache-dir``, else ``$RETRIEVAL_CACHE_DIR``, ``$XDG_CACHE_HOME/frameledger-retrieval``,
    else a folder under ``TMPDIR``."""
    if arg:
        return Path(arg)
    if os.environ.get("RETRIEVAL_CACHE_DIR"):
        return Path(os.environ["RETRIEVAL_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "frameledger-retrieval"
    return Path(tempfile.gettempdir()) / "frameledger-retrieval-cache"


def _confine_caches(cache_dir: Path) -> None:
    """Point library caches at the cache folder so nothing is written under HOME."""
    os.environ.setdefault("TORCH_HOME", str(cache_dir / "torch"))
    os.environ.setdefault("XDG_CACHE_HOME", str(cache_dir))


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", choices=DEVICE_CHOICES, help="auto (CUDA when available), cpu, cuda")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--cache-dir", default=None, help="cache folder (default: see docs/retrieval.md)")


def _train_and_gate(args: argparse.Namespace, index_dir: Path, train_path: Path, val_path: Path | None) -> None:
    from retrieval.evaluate import mean_best_iou
    from retrieval.train import TrainConfig, Trainer, load_examples

    index = FeatureIndex(index_dir)
    encoder = load_encoder(index.manifest.get("encoder"), base_dir=index_dir)
    examples = load_examples(train_path, index, encoder, warn=log)
    if not examples:
        log(f"{train_path}: no usable training examples, no head")
        return
    checkpoint = Path(args.checkpoint) if args.checkpoint else index_dir / HEAD_CHECKPOINT
    trainer = Trainer(
        index,
        examples,
        checkpoint,
        head_config=HeadConfig(dim=index.dim, hidden=args.hidden),
        config=TrainConfig(budget_s=args.train_budget, max_steps=args.max_steps, seed=args.seed),
        device=args.device,
        log=log,
    )
    if args.resume and trainer.resume():
        log(f"resumed from {checkpoint} at step {trainer.step} ({trainer.elapsed_s:.0f} s used)")
    result = trainer.run(handle_signals=True)
    log(f"head: {result.parameter_count} parameters, {result.steps} steps, stopped: {result.stopped}")
    if checkpoint.resolve() != (index_dir / HEAD_CHECKPOINT).resolve():
        shutil.copyfile(checkpoint, index_dir / HEAD_CHECKPOINT)
    # Keep the head only if it is at least as good as zero-shot on all held-out
    # examples: the trainer's own held-out videos plus the validation file.
    totals = {"zero_shot": 0.0, "head": 0.0}
    count = 0
    if result.zero_shot_score is not None and result.best_score is not None:
        n = len(trainer.holdout)
        totals["zero_shot"] += result.zero_shot_score * n
        totals["head"] += result.best_score * n
        count += n
        log(f"held-out mean IoU ({n}): zero-shot {result.zero_shot_score:.4f}, head {result.best_score:.4f}")
    val = load_examples(val_path, index, encoder, warn=log) if val_path is not None and val_path.is_file() else []
    if val:
        for name, flag in (("zero_shot", False), ("head", True)):
            set_manifest_head(index_dir, HEAD_CHECKPOINT if flag else None)
            predictor = MomentPredictor.from_index_dir(index_dir, device=args.device, use_head=flag)
            score = mean_best_iou(predictor, val)
            totals[name] += score * len(val)
            log(f"validation mean IoU ({len(val)}), {name}: {score:.4f}")
        count += len(val)
    use_head = count == 0 or totals["head"] >= totals["zero_shot"]
    set_manifest_head(index_dir, HEAD_CHECKPOINT if use_head else None)
    if not use_head:
        log("the head did not beat zero-shot on held-out examples; the index uses zero-shot")


def cmd_build(args: argparse.Namespace) -> int:
    corpus = Path(args.corpus)
    index_dir = Path(args.index_dir)
    t0 = time.perf_counter()
    encoder_spec = None
    if args.encoder:
        encoder_spec = load_encoder(args.encoder).spec()
    manifest = build_index(
        corpus, index_dir, encoder_spec=encoder_spec, query_embeddings=args.query_embeddings, log=log
    )
    log(f"index: {manifest['n_videos']} videos, {manifest['n_segments']} segments ({time.perf_counter() - t0:.1f} s)")
    if manifest.get("encoder") is None:
        log("warning: no text encoder recorded; pass --encoder to run")
    base = corpus if corpus.is_dir() else corpus.parent
    train = Path(args.train) if args.train else base / "train.jsonl"
    if args.train_budget > 0 and train.is_file() and manifest.get("encoder") is not None:
        val = Path(args.val) if args.val else base / "val.jsonl"
        _train_and_gate(args, index_dir, train, val)
    log(f"build done in {time.perf_counter() - t0:.1f} s")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from retrieval.service import iter_lines, run_requests

    cache_dir = resolve_cache_dir(args.cache_dir)
    _confine_caches(cache_dir)
    try:
        predictor = MomentPredictor.from_index_dir(
            args.index_dir,
            device=args.device,
            encoder=args.encoder,
            use_head=not args.no_head,
            cache_dir=cache_dir,
            config=RetrievalConfig(gamma=args.gamma, use_head=not args.no_head),
        )
    except EncoderError as exc:
        log(f"encoder unavailable ({exc}); every request gets a fallback interval")
        index = FeatureIndex(args.index_dir)
        predictor = MomentPredictor(index, None, device=args.device)
    log(f"device {predictor.device}, {'head' if predictor.head is not None else 'zero-shot'} ranking")
    summary = run_requests(predictor, iter_lines(args.queries), args.output, log=log)
    log("summary " + json.dumps(summary.as_dict()))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from retrieval.train import TrainConfig, Trainer, load_examples

    index = FeatureIndex(args.index_dir)
    encoder = load_encoder(args.encoder or index.manifest.get("encoder"), base_dir=index.path)
    examples = load_examples(args.train, index, encoder, warn=log)
    trainer = Trainer(
        index,
        examples,
        args.checkpoint,
        head_config=HeadConfig(dim=index.dim, hidden=args.hidden),
        config=TrainConfig(budget_s=args.budget, max_steps=args.max_steps, seed=args.seed),
        device=args.device,
        log=log,
    )
    if args.resume and trainer.resume():
        log(f"resumed at step {trainer.step} ({trainer.elapsed_s:.0f} s used)")
    result = trainer.run(handle_signals=True)
    print(
        json.dumps(
            {
                "steps": result.steps,
                "elapsed_s": round(result.elapsed_s, 3),
                "stopped": result.stopped,
                "parameters": result.parameter_count,
                "checkpoint": str(result.checkpoint),
            }
        )
    )
    if args.install:
        shutil.copyfile(args.checkpoint, index.path / HEAD_CHECKPOINT)
        set_manifest_head(index.path, HEAD_CHECKPOINT)
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from retrieval.synthetic import SyntheticConfig, generate_corpus, write_corpus

    cfg = SyntheticConfig(
        n_videos=args.videos, min_duration=args.min_duration, max_duration=args.max_duration, seed=args.seed
    )
    files = write_corpus(generate_corpus(cfg), args.out)
    print(json.dumps({k: str(v) for k, v in files.__dict__.items()}))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m retrieval", description="Moment retrieval over CLIP features.")
    sub = parser.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="build the index (and train the head if training examples exist)")
    b.add_argument("--corpus", required=True, help="corpus folder with records.jsonl (or the file itself)")
    b.add_argument("--index-dir", required=True)
    b.add_argument("--encoder", default=None, help="hash[:dim=,seed=] | precomputed:PATH | python:mod:factory")
    b.add_argument("--query-embeddings", default=None, help="precomputed query embeddings to copy into the index")
    b.add_argument("--train", default=None, help="labelled examples (default: CORPUS/train.jsonl when present)")
    b.add_argument("--val", default=None, help="validation examples (default: CORPUS/val.jsonl when present)")
    b.add_argument("--train-budget", type=float, default=2700.0, help="training seconds; 0 disables training")
    b.add_argument("--max-steps", type=int, default=None)
    b.add_argument("--hidden", type=int, default=HeadConfig.hidden)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--checkpoint", default=None, help="training checkpoint (default: INDEX/head.pt)")
    b.add_argument("--resume", action="store_true", help="continue from the checkpoint if it exists")
    _add_common(b)
    b.set_defaults(func=cmd_build)

    r = sub.add_parser("run", help="answer requests from a built index")
    r.add_argument("--index-dir", required=True)
    r.add_argument("--queries", required=True)
    r.add_argument("--output", required=True)
    r.add_argument("--encoder", default=None, help="override the index's text encoder")
    r.add_argument("--no-head", action="store_true", help="rank zero-shot even if the index has a head")
    r.add_argument("--gamma", type=float, default=DEFAULT_GAMMA, help="zero-shot length exponent")
    _add_common(r)
    r.set_defaults(func=cmd_run)

    t = sub.add_parser("train", help="train (or resume training) the temporal head")
    t.add_argument("--index-dir", required=True)
    t.add_argument("--train", required=True)
    t.add_argument("--checkpoint", required=True)
    t.add_argument("--encoder", default=None)
    t.add_argument("--budget", type=float, default=2700.0)
    t.add_argument("--max-steps", type=int, default=None)
    t.add_argument("--hidden", type=int, default=HeadConfig.hidden)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--resume", action="store_true")
    t.add_argument("--install", action="store_true", help="copy the head into the index and use it")
    _add_common(t)
    t.set_defaults(func=cmd_train)

    s = sub.add_parser("synth", help="write a synthetic corpus with known answers")
    s.add_argument("--out", required=True)
    s.add_argument("--videos", type=int, default=24)
    s.add_argument("--min-duration", type=float, default=30.0)
    s.add_argument("--max-duration", type=float, default=7200.0)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(func=cmd_synth)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "threads", None):
        torch.set_num_threads(args.threads)
    try:
        if hasattr(args, "device"):
            resolve_device(args.device)
        return int(args.func(args))
    except (DeviceUnavailableError, IndexFormatError, EncoderError, FileNotFoundError, ValueError) as exc:
        log(f"error: {exc}")
        return 2
