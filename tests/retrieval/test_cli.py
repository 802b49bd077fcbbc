"""The build/run command line, as the contract runs it: a non-root user, a read-only
index, TMPDIR and a cache path honoured, one legal row per answerable request."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from retrieval.cli import main
from retrieval.encoders import HashTextEncoder, PrecomputedTextEncoder
from retrieval.grid import Grid
from tests.retrieval.conftest import read_jsonl
from tests.retrieval.helpers import ground_truth, moment_quality

REPO = Path(__file__).resolve().parents[2]
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def cli(args: list[str], *, env: dict | None = None, user: bool = False, timeout: int = 120):
    base_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": "/nonexistent",
    }
    base_env.update(env or {})
    cmd = [sys.executable, "-m", "retrieval", *args, "--threads", "1"]
    if user:
        cmd = AS_NOBODY + cmd
    return subprocess.run(cmd, cwd=REPO, env=base_env, capture_output=True, text=True, timeout=timeout)


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_rows_on_grid(rows: list[dict], requests: list[dict], records: list[dict]) -> None:
    grids = {r["video_id"]: Grid.from_spec(r["grid"], r["duration"]) for r in records}
    video_of = {q["query_id"]: q["video_id"] for q in requests}
    assert len({r["query_id"] for r in rows}) == len(rows)
    for row in rows:
        assert set(row) == {"query_id", "start", "end"}
        assert isinstance(row["start"], float) and isinstance(row["end"], float)
        assert grids[video_of[row["query_id"]]].is_legal(row["start"], row["end"]), row


def skip_unless_nobody_can_run() -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root (to switch to the 'nobody' user) and setpriv")
    probe = subprocess.run(AS_NOBODY + [sys.executable, "-c", "import numpy"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"'nobody' cannot run this Python: {probe.stderr.decode()[-200:]}")


@pytest.fixture(scope="module")
def shared_dir():
    """A world-readable folder (pytest's tmp folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="retrieval-cli-"))
    path.chmod(0o755)
    yield path
    for p in path.rglob("*"):  # the test makes folders read-only; give write back to clean up
        if p.is_dir():
            p.chmod(0o755)
    shutil.rmtree(path, ignore_errors=True)


def owned_by_nobody(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, 65534, 65534)
    return path


def test_cli_round_trip_as_a_non_root_user_with_a_read_only_index(small_files, small_corpus, shared_dir):
    skip_unless_nobody_can_run()
    corpus = shared_dir / "data"
    shutil.copytree(small_files.corpus_dir, corpus / "corpus")
    shutil.copy(small_files.test_requests, corpus / "queries.jsonl")
    for p in [corpus, *corpus.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o444)
    work = shared_dir / "work"  # the index parent: not writable by the user
    work.mkdir(mode=0o755)
    index = owned_by_nobody(work / "index")
    tmp = owned_by_nobody(shared_dir / "tmp")
    cache = owned_by_nobody(shared_dir / "cache")
    out = owned_by_nobody(shared_dir / "out")
    env = {"TMPDIR": str(tmp), "RETRIEVAL_CACHE_DIR": str(cache)}

    built = cli(
        ["build", "--corpus", str(corpus / "corpus"), "--index-dir", str(index), "--encoder", "hash",
         "--train-budget", "1.5", "--hidden", "16"],
        env=env, user=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "training stopped" in built.stderr
    assert sorted(os.listdir(work)) == ["index"]
    for p in [index, *index.rglob("*")]:
        assert p.stat().st_uid == 65534
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = tree_digest(index)

    ran = cli(
        ["run", "--index-dir", str(index), "--queries", str(corpus / "queries.jsonl"),
         "--output", str(out / "results.jsonl")],
        env=env, user=True,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert tree_digest(index) == before
    rows = read_jsonl(out / "results.jsonl")
    requests = read_jsonl(corpus / "queries.jsonl")
    records = read_jsonl(corpus / "corpus" / "records.jsonl")
    assert [r["query_id"] for r in rows] == [q["query_id"] for q in requests]
    assert_rows_on_grid(rows, requests, records)
    quality = moment_quality(rows, ground_truth(small_corpus.queries_in("test")), records)
    assert quality["invalid"] == 0 and quality["missing"] == 0
    assert quality["raw_quality"] > 0.3


def test_a_malformed_request_does_not_break_the_others(small_files, small_index, tmp_path, capsys):
    requests = read_jsonl(small_files.test_requests)
    good = requests[:3]
    vid = good[0]["video_id"]
    lines = [
        json.dumps(good[0]),
        "{not json",
        json.dumps({"query_id": "no-video", "description": "a dog"}),
        json.dumps({"query_id": "ghost", "video_id": "no-such-video", "description": "a dog"}),
        json.dumps({"query_id": "stopwords", "video_id": vid, "description": "the a of"}),
        json.dumps({"query_id": "list", "video_id": vid, "description": ["a", "dog"]}),
        "[1, 2]",
        json.dumps(good[1]),
        json.dumps(good[1]),  # repeated id: answered once
        json.dumps(good[2]),
    ]
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(lines) + "\n")
    out = tmp_path / "nested" / "r.jsonl"
    code = main(["run", "--index-dir", str(small_index.path), "--queries", str(queries), "--output", str(out)])
    stderr = capsys.readouterr().err
    assert code == 0, stderr
    rows = read_jsonl(out)
    ids = [r["query_id"] for r in rows]
    assert ids == [good[0]["query_id"], "stopwords", good[1]["query_id"], good[2]["query_id"]]
    records = read_jsonl(small_files.records)
    known = requests + [{"query_id": "stopwords", "video_id": vid}]
    assert_rows_on_grid(rows, known, records)
    assert '"fallback": 1' in stderr and '"skipped": 6' in stderr


def test_run_writes_only_the_output_the_cache_and_tmpdir(small_files, small_index, tmp_path, monkeypatch, capsys):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("TORCH_HOME", str(cache / "torch"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", None)
    requests = read_jsonl(small_files.test_requests)[:2]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in requests))
    before = tree_digest(small_index.path)
    encoder = "python:tests.retrieval.test_encoders:make_fake_clip"
    code = main(
        ["run", "--index-dir", str(small_index.path), "--queries", str(queries),
         "--output", str(tmp_path / "r.jsonl"), "--cache-dir", str(cache), "--encoder", encoder]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert tree_digest(small_index.path) == before
    assert len(list(cache.glob("*.npy"))) == len(requests)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "q.jsonl", "r.jsonl", "tmp"]
    assert len(read_jsonl(tmp_path / "r.jsonl")) == 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_run_refuses_cuda_when_there_is_none(small_index, tmp_path, capsys):
    code = main(
        ["run", "--index-dir", str(small_index.path), "--queries", str(tmp_path / "q"), "--output",
         str(tmp_path / "r"), "--device", "cuda"]
    )  # fmt: skip
    assert code == 2 and "cuda" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_run_on_a_missing_index_fails_with_a_message(tmp_path, capsys):
    code = main(["run", "--index-dir", str(tmp_path / "none"), "--queries", "q", "--output", str(tmp_path / "r")])
    assert code == 2 and "not a readable index" in capsys.readouterr().err


def test_a_corrupt_head_falls_back_to_zero_shot(small_files, small_index, tmp_path, capsys):
    index = tmp_path / "index"
    shutil.copytree(small_index.path, index)
    (index / "head.pt").write_bytes(b"not a checkpoint")
    manifest = json.loads((index / "manifest.json").read_text())
    (index / "manifest.json").write_text(json.dumps({**manifest, "head": "head.pt"}))
    out = tmp_path / "r.jsonl"
    code = main(["run", "--index-dir", str(index), "--queries", str(small_files.test_requests), "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and "unusable" in err and "zero-shot ranking" in err
    assert len(read_jsonl(out)) == len(read_jsonl(small_files.test_requests))


def test_precomputed_query_embeddings_copied_at_build_answer_like_the_live_encoder(small_files, tmp_path, capsys):
    requests = read_jsonl(small_files.test_requests)
    live = HashTextEncoder()
    table = PrecomputedTextEncoder({q["query_id"]: live.encode(q["description"]) * 7.0 for q in requests})
    table.save_npz(tmp_path / "queries.npz")
    index = tmp_path / "index"
    assert main(["build", "--corpus", str(small_files.corpus_dir), "--index-dir", str(index),
                 "--query-embeddings", str(tmp_path / "queries.npz"), "--train-budget", "0"]) == 0  # fmt: skip
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["encoder"] == {"kind": "precomputed", "path": "query_embeddings.npz"}
    (tmp_path / "queries.npz").unlink()  # the index carries its own copy
    assert main(["run", "--index-dir", str(index), "--queries", str(small_files.test_requests),
                 "--output", str(tmp_path / "pre.jsonl")]) == 0  # fmt: skip
    assert main(["run", "--index-dir", str(index), "--queries", str(small_files.test_requests),
                 "--output", str(tmp_path / "live.jsonl"), "--encoder", "hash"]) == 0  # fmt: skip
    capsys.readouterr()
    assert read_jsonl(tmp_path / "pre.jsonl") == read_jsonl(tmp_path / "live.jsonl")
    assert len(read_jsonl(tmp_path / "pre.jsonl")) == len(requests)
