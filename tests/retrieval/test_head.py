"""The temporal head: parameter budget, batching, and its zero-shot starting point."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from retrieval.encoders import HashTextEncoder
from retrieval.head import MAX_PARAMETERS, HeadConfig, TemporalHead
from retrieval.predictor import MomentPredictor, RetrievalConfig
from retrieval.train import Trainer, TrainingExample


def test_default_head_has_at_most_five_million_parameters():
    head = TemporalHead(HeadConfig())
    count = sum(p.numel() for p in head.parameters())
    assert count == head.parameter_count() == 251_783
    assert count <= MAX_PARAMETERS == 5_000_000


@pytest.mark.parametrize(
    "config", [HeadConfig(separable=False), HeadConfig(hidden=512, separable=False), HeadConfig(hidden=768)]
)
def test_the_larger_documented_heads_still_fit_the_parameter_budget(config):
    assert TemporalHead(config).parameter_count() <= MAX_PARAMETERS


def test_trainer_refuses_a_head_over_the_parameter_budget(small_index):
    big = HeadConfig(hidden=512, layers=6, separable=False)
    assert TemporalHead(big).parameter_count() > MAX_PARAMETERS
    example = TrainingExample("q", small_index.video_ids()[0], np.ones(512, np.float32) / 512**0.5, ((0.0, 5.0),))
    with pytest.raises(ValueError, match="parameters"):
        Trainer(small_index, [example], "unused.pt", head_config=big, device="cpu")


def test_padded_batch_gives_the_same_outputs_as_one_example_at_a_time():
    torch.manual_seed(0)
    head = TemporalHead(HeadConfig(hidden=32)).eval()
    a, b = torch.randn(9, 512), torch.randn(4, 512)
    qa, qb = torch.randn(512), torch.randn(512)
    padded = torch.zeros(2, 9, 512)
    padded[0], padded[1, :4] = a, b
    with torch.no_grad():
        batch = head.forward_batch(padded, torch.stack([qa, qb]), [9, 4])
        single = head(b, qb)
    torch.testing.assert_close(batch[1].segment_logits, single.segment_logits, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(batch[1].end_logits, single.end_logits, atol=1e-5, rtol=1e-4)
    assert batch[0].start_logits.shape == (10,) and batch[1].start_logits.shape == (5,)


def test_an_untrained_head_picks_the_zero_shot_answer(small_index, small_corpus):
    torch.manual_seed(0)
    head = TemporalHead(HeadConfig(hidden=32))
    enc = HashTextEncoder()
    zs = MomentPredictor(small_index, enc, device="cpu", config=RetrievalConfig(use_head=False))
    with_head = MomentPredictor(small_index, enc, device="cpu", head=head)
    same = 0
    queries = small_corpus.queries[:8]
    for q in queries:
        a = zs.predict(q["video_id"], q["description"])
        b = with_head.predict(q["video_id"], q["description"])
        assert b.method == "head" and a.method == "zero-shot"
        same += (a.start, a.end) == (b.start, b.end)
    assert same == len(queries)
