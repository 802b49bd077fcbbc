"""Text encoders behind one interface; nothing downloads weights."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import retrieval
from retrieval.encoders import (
    CachedTextEncoder,
    EncoderError,
    HashTextEncoder,
    PrecomputedTextEncoder,
    load_encoder,
    tokenize,
)

CALLS: list[str] = []


class FakeClip:
    """Stands in for a locally installed CLIP wrapper (``encode(list[str])``)."""

    dim = 512

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.hash = HashTextEncoder()

    def encode(self, texts):
        CALLS.extend(texts)
        return np.stack([self.hash.encode(t) * self.scale for t in texts])


def make_fake_clip(**kwargs) -> FakeClip:
    return FakeClip(**kwargs)


def test_hash_encoder_is_deterministic_and_ignores_case_and_stop_words():
    a, b = HashTextEncoder(seed=3), HashTextEncoder(seed=3)
    np.testing.assert_array_equal(a.encode("A dog opens the door."), b.encode("dog OPENS door"))
    assert not np.allclose(a.encode("dog"), HashTextEncoder(seed=4).encode("dog"))
    assert tokenize("The person turns a light on.") == ["person", "turns", "light"]


def test_hash_encoder_refuses_a_description_without_content_words():
    with pytest.raises(EncoderError):
        HashTextEncoder().encode("the a of")


def test_precomputed_embeddings_are_found_by_query_id_or_text(tmp_path):
    enc = PrecomputedTextEncoder({"q1": np.ones(4)}, {"a cat": np.arange(4.0)})
    np.testing.assert_array_equal(enc.encode("", query_id="q1"), np.ones(4))
    np.testing.assert_array_equal(enc.encode("a cat", query_id="zzz"), np.arange(4.0))
    with pytest.raises(EncoderError):
        enc.encode("a dog", query_id="q2")
    enc.save_npz(tmp_path / "q.npz")
    again = load_encoder(f"precomputed:{tmp_path / 'q.npz'}")
    np.testing.assert_array_equal(again.encode("a cat"), np.arange(4.0))


def test_moment_detr_query_files_are_read_from_pooler_output(tmp_path):
    for qid in (7, 9):
        np.savez(
            tmp_path / f"qid{qid}.npz",
            pooler_output=np.full((1, 512), qid, np.float32),
            last_hidden_state=np.zeros((5, 512), np.float32),
        )
    enc = load_encoder({"kind": "precomputed", "path": str(tmp_path)})
    assert enc.encode("", query_id="9")[0] == 9
    assert enc.encode("", query_id="qid7")[0] == 7


def test_a_local_model_plugs_in_by_dotted_path_and_is_cached(tmp_path):
    enc = load_encoder({"kind": "python", "target": f"{__name__}:make_fake_clip", "kwargs": {"scale": 2.0}})
    cached = CachedTextEncoder(enc, tmp_path / "cache")
    CALLS.clear()
    first = cached.encode("a chef pours a bottle")
    second = cached.encode("a chef pours a bottle")
    np.testing.assert_array_equal(first, second)
    assert CALLS == ["a chef pours a bottle"]
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 1


def test_an_unwritable_cache_does_not_stop_encoding(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cached = CachedTextEncoder(HashTextEncoder(), blocker / "cache")
    assert cached.encode("dog").shape == (512,)


@pytest.mark.parametrize("spec", ["nope", "hash:dim=x", "python:", {"kind": "weird"}, None])
def test_bad_encoder_specs_raise_encoder_error(spec):
    with pytest.raises(EncoderError):
        load_encoder(spec)


def test_the_retrieval_package_has_no_network_or_weight_download_code():
    banned = {"urllib", "requests", "http", "socket", "huggingface_hub", "transformers", "clip", "open_clip"}
    found = []
    for path in Path(retrieval.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                if isinstance(node, ast.Attribute) and node.attr in ("hub", "load_state_dict_from_url"):
                    found.append(f"{path.name}:{node.lineno}")
                continue
            found += [f"{path.name}:{n}" for n in names if n.split(".")[0] in banned]
    assert found == []
