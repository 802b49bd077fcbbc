"""Fixtures of the retrieval suite: small synthetic corpora and built indexes.

Torch runs on one thread here: the tensors are small and the machine is shared, where
extra threads only add contention.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from retrieval.encoders import HashTextEncoder
from retrieval.store import FeatureIndex, build_index
from retrieval.synthetic import SyntheticConfig, generate_corpus, write_corpus

torch.set_num_threads(1)

SMALL = SyntheticConfig(n_videos=10, min_duration=30.0, max_duration=400.0, seed=11, split=(0.5, 0.0, 0.5))


@pytest.fixture(scope="session")
def small_corpus():
    return generate_corpus(SMALL)


@pytest.fixture(scope="session")
def small_files(small_corpus, tmp_path_factory):
    return write_corpus(small_corpus, tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="session")
def small_index(small_files, tmp_path_factory) -> FeatureIndex:
    index_dir = tmp_path_factory.mktemp("small-index")
    build_index(small_files.corpus_dir, index_dir, encoder_spec=HashTextEncoder().spec(), log=lambda m: None)
    return FeatureIndex(index_dir)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def gpu_available() -> bool:
    return torch.cuda.is_available()


requires_gpu = pytest.mark.skipif(not gpu_available(), reason="torch.cuda.is_available() is false")
