"""Moment-retrieval benchmark: speed of the exhaustive scan, latency, build time, quality.

Run: ``.venv/bin/python bench/retrieval.py [--device auto|cpu|cuda] [--threads 1]
[--train-seconds 60]``. Default run: about 3 minutes on 2 cores. ``--app-only`` runs only
the web app's path instead (``bench/retrieval_app.py``: the search index built by the app,
search latency through the HTTP API on a 2-hour video).

It prints:

1. intervals scored per second by the all-interval scan (every legal grid interval of
   a video, prefix sums, torch), on CPU and, when the device resolves to CUDA, on CUDA;
   target >= 50 million per second on CPU;
2. query latency p50/p95 for a 2-hour video on a 2 s grid (3,601 grid points,
   6,481,800 intervals per request), end to end through ``MomentPredictor.predict``
   (encode, similarity, scan, fine scoring), zero-shot and with the head;
   target p95 <= 20 ms;
3. index build time for 500 synthetic videos (30 s to 10 min, features as float16
   ``.npz`` files written beforehand, not timed);
4. quality with ``moment-utility-v1`` (the ``scoring`` library) on a held-out synthetic
   split (videos 30 s to 2 h, other seed than the training corpus): a fixed prior (the
   middle third), the zero-shot scan statistic, the trained head (short training; the
   weights that did best on held-out training videos are kept) and the oracle
   (grid-optimal interval); plus the zero-shot ranker on the real
   QVHighlights / Charades-STA annotation structure with synthetic features.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from retrieval.annotations import corpus_from_annotations, load_charades_sta, load_qvhighlights  # noqa: E402
from retrieval.device import resolve_device  # noqa: E402
from retrieval.encoders import HashTextEncoder  # noqa: E402
from retrieval.grid import Grid  # noqa: E402
from retrieval.head import HeadConfig  # noqa: E402
from retrieval.predictor import MomentPredictor, RetrievalConfig, fallback_interval  # noqa: E402
from retrieval.scan import row_champions, select_candidates, zero_shot_terms  # noqa: E402
from retrieval.store import HEAD_CHECKPOINT, FeatureIndex, build_index, set_manifest_head  # noqa: E402
from retrieval.synthetic import SyntheticConfig, generate_corpus, write_corpus  # noqa: E402
from retrieval.train import TrainConfig, Trainer, load_examples  # noqa: E402
from scoring import score_submission  # noqa: E402


def quiet(_msg: str) -> None:
    pass


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]


# ------------------------------------------------------------------------- speed
def bench_throughput(device: torch.device, repeats: int) -> dict:
    """Intervals per second of the scan kernel (row champions + top 64)."""
    rng = np.random.default_rng(0)
    grids = [Grid.from_step(2.0, 7200.0), Grid.from_step(1.0, 1800.0), Grid.from_step(0.5, 600.0)]
    total, elapsed, per_grid = 0, 0.0, {}
    for grid in grids:
        sim = torch.from_numpy(rng.normal(size=grid.n_segments).astype(np.float32)).to(device)
        times = torch.from_numpy(np.array(grid.times)).to(device)
        row_champions(zero_shot_terms(sim, times, step=grid.step))  # warm-up
        runs = []
        for _ in range(repeats):
            sync(device)
            t0 = time.perf_counter()
            champions = row_champions(zero_shot_terms(sim, times, step=grid.step))
            select_candidates(champions, grid.times)
            sync(device)
            runs.append(time.perf_counter() - t0)
        median = float(np.median(runs))
        per_grid[f"{grid.n_points} points"] = round(champions.n_scored / median / 1e6, 1)
        total += champions.n_scored * repeats
        elapsed += sum(runs)
    return {"device": str(device), "M_intervals_per_s": round(total / elapsed / 1e6, 1), "by_grid": per_grid}


def bench_latency(index_dir: Path, video_id: str, device: torch.device, use_head: bool, n: int) -> dict:
    predictor = MomentPredictor.from_index_dir(
        index_dir, device=device, use_head=use_head, config=RetrievalConfig(use_head=use_head)
    )
    rng = np.random.default_rng(1)
    from retrieval.synthetic import ACTIONS, OBJECTS, SUBJECTS

    texts = [f"a {rng.choice(SUBJECTS)} {rng.choice(ACTIONS)} a {rng.choice(OBJECTS)}" for _ in range(n + 3)]
    t0 = time.perf_counter()
    predictor.predict(video_id, texts[0])  # first request also loads the video's features
    first = (time.perf_counter() - t0) * 1000
    for text in texts[1:3]:
        predictor.predict(video_id, text)
    lat = []
    for text in texts[3:]:
        sync(device)
        t0 = time.perf_counter()
        pred = predictor.predict(video_id, text)
        sync(device)
        lat.append((time.perf_counter() - t0) * 1000)
    return {
        "device": str(device),
        "ranker": pred.method,
        "intervals_per_request": pred.n_scored,
        "p50_ms": round(percentile(lat, 0.5), 2),
        "p95_ms": round(percentile(lat, 0.95), 2),
        "first_request_ms": round(first, 2),
    }


def bench_build(work: Path, n_videos: int) -> dict:
    cfg = SyntheticConfig(n_videos=n_videos, min_duration=30, max_duration=600, seed=21, queries_per_video=(1, 1))
    files = write_corpus(generate_corpus(cfg), work / "build500")
    t0 = time.perf_counter()
    manifest = build_index(files.corpus_dir, work / "build500" / "index", encoder_spec={"kind": "hash"}, log=quiet)
    seconds = time.perf_counter() - t0
    return {"videos": manifest["n_videos"], "segments": manifest["n_segments"], "seconds": round(seconds, 2)}


# ----------------------------------------------------------------------- quality
def quality(rows: list[dict], gt: dict, records: list[dict]) -> dict:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    d = score_submission("moment-utility-v1", gt, data, corpus=records).details
    keys = ("raw_quality", "reward", "r1_at_0.5", "r1_at_0.7", "r1_at_0.9", "mean_iou", "per_source", "invalid")
    return {k: d[k] for k in keys}


def predict_rows(predictor: MomentPredictor, queries: list[dict]) -> list[dict]:
    rows = []
    for q in queries:
        pred = predictor.predict(q["video_id"], q["description"], query_id=q["query_id"])
        rows.append({"query_id": q["query_id"], "start": pred.start, "end": pred.end})
    return rows


def reference_rows(index: FeatureIndex, queries: list[dict], kind: str) -> list[dict]:
    rows = []
    for q in queries:
        grid = index.video(q["video_id"]).grid
        a, b = fallback_interval(grid) if kind == "prior" else grid.best_interval(q["intervals"])[1:]
        rows.append({"query_id": q["query_id"], "start": float(grid.times[a]), "end": float(grid.times[b])})
    return rows


def bench_quality(work: Path, device: torch.device, args) -> tuple[dict, dict, Path]:
    train = generate_corpus(
        SyntheticConfig(n_videos=args.train_videos, seed=args.seed, split=(1.0, 0.0, 0.0), max_duration=7200)
    )
    test = generate_corpus(
        SyntheticConfig(n_videos=args.test_videos, seed=args.seed + 1000, split=(0.0, 0.0, 1.0), max_duration=7200)
    )
    train.videos += test.videos
    train.queries += test.queries
    files = write_corpus(train, work / "quality")
    index_dir = work / "quality" / "index"
    build_index(files.corpus_dir, index_dir, encoder_spec=HashTextEncoder().spec(), log=quiet)
    index = FeatureIndex(index_dir)
    examples = load_examples(files.train, index, HashTextEncoder(), warn=quiet)
    trainer = Trainer(
        index,
        examples,
        index_dir / HEAD_CHECKPOINT,
        head_config=HeadConfig(dim=index.dim),
        config=TrainConfig(budget_s=args.train_seconds, seed=args.seed),
        device=device,
        log=quiet,
    )
    result = trainer.run()
    set_manifest_head(index_dir, HEAD_CHECKPOINT)
    queries = test.queries
    gt = {"queries": [{k: q[k] for k in ("query_id", "video_id", "source", "intervals")} for q in queries]}
    records = [json.loads(line) for line in files.records.read_text().splitlines()]
    table = {
        "fixed prior (middle third)": quality(reference_rows(index, queries, "prior"), gt, records),
        "zero-shot scan statistic": quality(
            predict_rows(MomentPredictor.from_index_dir(index_dir, device=device, use_head=False), queries),
            gt,
            records,
        ),
        f"trained head ({result.steps} steps, {result.elapsed_s:.0f} s, kept {result.best_step})": quality(
            predict_rows(MomentPredictor.from_index_dir(index_dir, device=device, use_head=True), queries),
            gt,
            records,
        ),
        "oracle (grid-optimal)": quality(reference_rows(index, queries, "oracle"), gt, records),
    }
    durations = [v.duration for v in test.videos]
    meta = {
        "train_examples": len(examples),
        "test_queries": len(queries),
        "test_videos": len(test.videos),
        "test_duration_s": [round(min(durations), 1), round(float(np.median(durations)), 1), round(max(durations), 1)],
        "head_parameters": result.parameter_count,
        "train_steps": result.steps,
        "train_seconds": round(result.elapsed_s, 1),
        "held_out_examples": len(trainer.holdout),
        "kept_step": result.best_step,
        "held_out_iou_head": result.best_score,
        "held_out_iou_zero_shot": result.zero_shot_score,
    }
    return table, meta, index_dir


def bench_real_structure(work: Path, device: torch.device, n: int) -> dict:
    picked = load_qvhighlights(limit=n) + [q for q in load_charades_sta() if len(q.intervals) > 1][:n]
    corpus = corpus_from_annotations(picked, seed=5)
    files = write_corpus(corpus, work / "real")
    build_index(files.corpus_dir, work / "real" / "index", encoder_spec=HashTextEncoder().spec(), log=quiet)
    index = FeatureIndex(work / "real" / "index")
    queries = corpus.queries
    gt = {"queries": [{k: q[k] for k in ("query_id", "video_id", "source", "intervals")} for q in queries]}
    records = [json.loads(line) for line in files.records.read_text().splitlines()]
    predictor = MomentPredictor(index, HashTextEncoder(), device=device)
    return {
        "fixed prior (middle third)": quality(reference_rows(index, queries, "prior"), gt, records),
        "zero-shot scan statistic": quality(predict_rows(predictor, queries), gt, records),
        "oracle (grid-optimal)": quality(reference_rows(index, queries, "oracle"), gt, records),
    }


def print_table(title: str, table: dict) -> None:
    print(f"\n{title}")
    head = ("ranker", "quality", "reward", "R1@.5", "R1@.7", "R1@.9", "mIoU")
    print(f"  {head[0]:<44} {head[1]:>8} {head[2]:>8} {head[3]:>6} {head[4]:>6} {head[5]:>6} {head[6]:>6}  per source")
    for name, q in table.items():
        per = ", ".join(f"{k} {v:.3f}" for k, v in q["per_source"].items())
        print(
            f"  {name:<44} {q['raw_quality']:>8.4f} {q['reward']:>8.4f} {q['r1_at_0.5']:>6.3f} "
            f"{q['r1_at_0.7']:>6.3f} {q['r1_at_0.9']:>6.3f} {q['mean_iou']:>6.3f}  {per}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 on a shared machine)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--latency-queries", type=int, default=60)
    parser.add_argument("--build-videos", type=int, default=500)
    parser.add_argument("--train-videos", type=int, default=160)
    parser.add_argument("--test-videos", type=int, default=60)
    parser.add_argument("--train-seconds", type=float, default=60.0)
    parser.add_argument("--real-queries", type=int, default=40, help="per source, real annotation structure")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--app-only", action="store_true", help="only the in-app path (bench/retrieval_app.py)")
    parser.add_argument("--searches", type=int, default=200, help="--app-only: searches of each kind")
    parser.add_argument("--descriptor-seconds", type=float, default=360.0, help="--app-only: descriptor video length")
    args = parser.parse_args(argv)
    if args.app_only:
        from bench import retrieval_app

        torch.set_num_threads(args.threads)
        out = retrieval_app.main(args)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        return 0
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    devices = [torch.device("cpu")] + ([device] if device.type == "cuda" else [])
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="retrieval-bench-"))
    out: dict = {"torch": torch.__version__, "threads": args.threads, "device": str(device)}
    try:
        print(f"torch {torch.__version__}, {args.threads} CPU thread(s), device {device}")
        out["throughput"] = [bench_throughput(d, args.repeats) for d in devices]
        for t in out["throughput"]:
            print(f"scan throughput on {t['device']}: {t['M_intervals_per_s']} M intervals/s  {t['by_grid']}")

        table, meta, index_dir = bench_quality(work, device, args)
        out["quality"], out["quality_meta"] = table, meta

        # a 2-hour video on a 2 s grid in the same index, for latency
        long_cfg = SyntheticConfig(n_videos=1, min_duration=7200, max_duration=7200, seed=7, grid_steps=(2.0,))
        long_cfg = SyntheticConfig(**{**long_cfg.__dict__, "explicit_grid_share": 0.0})
        files = write_corpus(generate_corpus(long_cfg), work / "long")
        build_index(files.corpus_dir, work / "long" / "index", encoder_spec=HashTextEncoder().spec(), log=quiet)
        shutil.copy(index_dir / HEAD_CHECKPOINT, work / "long" / "index" / HEAD_CHECKPOINT)
        set_manifest_head(work / "long" / "index", HEAD_CHECKPOINT)
        long_id = FeatureIndex(work / "long" / "index").video_ids()[0]
        out["latency"] = []
        for d in devices:
            for use_head in (False, True):
                lat = bench_latency(work / "long" / "index", long_id, d, use_head, args.latency_queries)
                out["latency"].append(lat)
                print(
                    f"latency, 2-hour video on a 2 s grid ({lat['intervals_per_request']:,} intervals), "
                    f"{lat['ranker']} on {lat['device']}: p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms "
                    f"(first request {lat['first_request_ms']} ms)"
                )

        out["build"] = bench_build(work, args.build_videos)
        b = out["build"]
        print(f"index build: {b['videos']} videos, {b['segments']:,} segments in {b['seconds']} s")

        print_table(
            f"quality, moment-utility-v1, held-out synthetic split ({meta['test_queries']} queries on "
            f"{meta['test_videos']} videos of {meta['test_duration_s'][0]}-{meta['test_duration_s'][2]} s; "
            f"head {meta['head_parameters']:,} parameters, {meta['train_examples']} training examples of which "
            f"{meta['held_out_examples']} held out for weight selection)",
            table,
        )
        out["real_structure"] = bench_real_structure(work, device, args.real_queries)
        print_table(
            f"quality on real annotation structure with synthetic features ({args.real_queries} QVHighlights val "
            f"+ {args.real_queries} re-annotated Charades-STA queries)",
            out["real_structure"],
        )
        out["seconds"] = round(time.perf_counter() - started, 1)
        print(f"\nbench finished in {out['seconds']} s")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
