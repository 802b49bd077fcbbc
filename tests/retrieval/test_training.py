"""Training the head: time budget, clean stop, checkpoint, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from retrieval.encoders import HashTextEncoder
from retrieval.head import HeadConfig, load_head
from retrieval.train import TrainConfig, Trainer, TrainingExample, load_examples, split_holdout

TINY = HeadConfig(hidden=16, layers=2)


@pytest.fixture(scope="module")
def examples(small_index, small_files):
    return load_examples(small_files.train, small_index, HashTextEncoder(), warn=lambda m: None)


def make(small_index, examples, path, **cfg) -> Trainer:
    config = TrainConfig(batch_size=2, crop_segments=64, candidates=8, checkpoint_every_s=1e9, **cfg)
    return Trainer(small_index, examples, path, head_config=TINY, config=config, device="cpu", log=lambda m: None)


def params(trainer: Trainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.head.parameters()]


def test_training_examples_load_from_the_labelled_split(examples, small_corpus):
    assert len(examples) == len(small_corpus.queries_in("train")) > 3
    assert all(ex.intervals and ex.embedding.shape == (512,) for ex in examples)


def test_training_stops_within_the_time_budget_and_writes_a_checkpoint(small_index, examples, tmp_path):
    trainer = make(small_index, examples, tmp_path / "ck.pt", budget_s=1.0)
    started = time.monotonic()
    result = trainer.run()
    assert result.stopped == "budget"
    assert result.steps > 0
    assert time.monotonic() - started < 1.0 + 2.0
    assert result.elapsed_s <= 1.0 + 1.0
    assert (tmp_path / "ck.pt").is_file()
    head = load_head(tmp_path / "ck.pt")
    assert head.parameter_count() == trainer.head.parameter_count()


def test_a_stop_request_ends_training_cleanly_with_a_checkpoint(small_index, examples, tmp_path):
    stop = threading.Event()
    stop.set()
    result = make(small_index, examples, tmp_path / "ck.pt", budget_s=60).run(stop=stop)
    assert result.stopped == "stop_requested" and result.steps == 0
    assert (tmp_path / "ck.pt").is_file()


def test_interrupted_and_resumed_training_equals_uninterrupted_training(small_index, examples, tmp_path):
    torch.manual_seed(0)
    straight = make(small_index, examples, tmp_path / "a.pt", max_steps=6)
    straight.run()

    torch.manual_seed(0)
    first = make(small_index, examples, tmp_path / "b.pt", max_steps=6)
    for _ in range(3):  # what run() does until it is interrupted, then its final save
        first.train_step()
    first.elapsed_s = 1.0
    first.save()
    assert first.step == 3
    torch.manual_seed(123)  # whatever happens in between must not matter
    resumed = make(small_index, examples, tmp_path / "b.pt", max_steps=6)
    assert resumed.resume()
    assert resumed.step == 3 and resumed.elapsed_s > 0
    resumed.run()
    assert resumed.step == 6
    for p, q in zip(params(straight), params(resumed), strict=True):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)
    for name, value in straight.ema.items():
        torch.testing.assert_close(value, resumed.ema[name], atol=1e-6, rtol=1e-5)
    assert straight.losses == pytest.approx(resumed.losses, rel=1e-5)


def test_resumed_training_only_uses_what_is_left_of_the_budget(small_index, examples, tmp_path):
    first = make(small_index, examples, tmp_path / "c.pt", budget_s=1.0)
    first.run()
    again = make(small_index, examples, tmp_path / "c.pt", budget_s=1.0)
    again.resume()
    steps_before = again.step
    result = again.run()
    assert result.stopped == "budget"
    assert again.step - steps_before <= 2


def test_resume_refuses_a_checkpoint_of_another_head_shape(small_index, examples, tmp_path):
    make(small_index, examples, tmp_path / "d.pt", max_steps=1).run()
    other = Trainer(small_index, examples, tmp_path / "d.pt", head_config=HeadConfig(hidden=24, layers=2), device="cpu")
    with pytest.raises(ValueError, match="configuration"):
        other.resume()


def test_training_lowers_the_loss(small_index, examples, tmp_path):
    torch.manual_seed(0)
    trainer = make(small_index, examples, tmp_path / "e.pt", max_steps=40, lr=3e-3)
    trainer.run()
    first, last = sum(trainer.losses[:8]) / 8, sum(trainer.losses[-8:]) / 8
    assert last < 0.8 * first


def test_sigterm_stops_command_line_training_cleanly_with_a_checkpoint(small_index, small_files, tmp_path):
    repo = Path(__file__).resolve().parents[2]
    checkpoint = tmp_path / "ck.pt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "retrieval", "train", "--index-dir", str(small_index.path), "--train",
         str(small_files.train), "--checkpoint", str(checkpoint), "--budget", "600", "--hidden", "16",
         "--threads", "1"],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        for line in proc.stderr:
            if "training on" in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["stopped"] == "signal" and summary["elapsed_s"] < 60
    assert checkpoint.is_file() and load_head(checkpoint).parameter_count() == summary["parameters"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch.cuda.is_available() is false")
def test_training_runs_on_cuda_and_the_head_loads_back_on_cpu(small_index, examples, tmp_path):
    trainer = Trainer(
        small_index,
        examples,
        tmp_path / "gpu.pt",
        head_config=TINY,
        config=TrainConfig(batch_size=2, crop_segments=64, candidates=8, max_steps=5),
        device="cuda",
        log=lambda m: None,
    )
    assert next(trainer.head.parameters()).is_cuda
    result = trainer.run()
    assert result.steps == 5
    assert load_head(tmp_path / "gpu.pt", "cpu").parameter_count() == result.parameter_count


def test_the_checkpoint_keeps_the_weights_that_did_best_on_held_out_videos(small_index, examples, tmp_path):
    held = [ex for ex in examples if ex.video_id == examples[0].video_id]
    train = [ex for ex in examples if ex.video_id != examples[0].video_id]
    trainer = Trainer(
        small_index,
        train,
        tmp_path / "sel.pt",
        head_config=TINY,
        config=TrainConfig(batch_size=2, crop_segments=64, candidates=8, max_steps=6, eval_every_steps=2),
        device="cpu",
        log=lambda m: None,
        holdout=held,
    )
    result = trainer.run()
    assert result.best_step in (2, 4, 6) and 0 <= result.best_score <= 1
    assert 0 <= result.zero_shot_score <= 1
    head = load_head(tmp_path / "sel.pt")
    for name, value in head.state_dict().items():
        torch.testing.assert_close(value, trainer.best[name])
    assert trainer.holdout_iou(trainer.best) == pytest.approx(result.best_score)


def test_held_out_videos_are_never_trained_on():
    examples = [TrainingExample(f"q{i}", f"v{i % 9}", torch.zeros(4).numpy(), ((0.0, 1.0),)) for i in range(40)]
    train, held = split_holdout(examples, 0.15, seed=3)
    assert len(train) + len(held) == 40 and len(held) >= 5
    assert not {ex.video_id for ex in train} & {ex.video_id for ex in held}
    assert split_holdout(examples, 0.15, seed=3) == (train, held)
    assert split_holdout(examples[:10], 0.15, seed=3) == (examples[:10], [])
