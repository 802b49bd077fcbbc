"""The cache never unpickles (``deploy/cache.py``): an entry planted in the cache folder or set in
Redis by anyone who can reach it is read as JSON or not at all, and runs nothing in the web
process. Values the application caches (sign-in counts, human scores) go through as JSON."""

from __future__ import annotations

import os
import pickle
import uuid
import zlib
from pathlib import Path

import pytest
from django.utils.module_loading import import_string

import deploy.settings as production
from deploy.cache import JSONFileCache


class Payload:
    """What an attacker plants: unpickling it creates ``marker``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def configured_cache(tmp_path):
    """The cache the production settings choose (Redis with REDIS_URL, else files), on a
    folder or key prefix of this test's own."""
    config = dict(production.CACHES["default"])
    backend = import_string(config.pop("BACKEND"))
    location = config.pop("LOCATION")
    if "redis" in backend.__module__:
        config["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"
    else:
        location = str(tmp_path / "cache")
    return backend(location, config)


def plant(cache, key: str, marker: Path) -> None:
    """Store a pickle payload under ``key`` the way each backend lays out its entries."""
    payload = pickle.dumps(Payload(marker))
    if hasattr(cache, "_key_to_file"):
        Path(cache._dir).mkdir(parents=True, exist_ok=True)
        with open(cache._key_to_file(key), "wb") as f:  # FileBasedCache's own layout
            f.write(pickle.dumps(None) + zlib.compress(payload))
    else:
        client = cache._cache.get_client(key, write=True)
        client.set(cache.make_and_validate_key(key), payload)


def test_a_planted_pickle_in_the_configured_cache_runs_no_code(tmp_path):
    cache = configured_cache(tmp_path)
    marker = tmp_path / "ran"
    plant(cache, "frameledger:human-score:abc", marker)
    assert cache.get("frameledger:human-score:abc") is None
    assert cache.get("frameledger:human-score:abc", "default") in (None, "default")
    cache.touch("frameledger:human-score:abc")
    assert not marker.exists()


def test_a_planted_pickle_in_the_file_cache_runs_no_code_and_is_removed(tmp_path):
    cache = JSONFileCache(str(tmp_path / "cache"), {})
    marker = tmp_path / "ran"
    path = cache._key_to_file("k")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(pickle.dumps(Payload(marker)) + zlib.compress(pickle.dumps(Payload(marker))))
    assert cache.get("k") is None and not cache.has_key("k")
    assert not marker.exists() and not os.path.exists(path)
    Path(path).write_bytes(b"null\n" + zlib.compress(pickle.dumps(Payload(marker))))  # a valid expiry line
    assert cache.get("k", "miss") == "miss" and not marker.exists()


@pytest.mark.parametrize("value", [{"reward": 0.5, "reason": "ok", "details": {"f1": [1, 2]}}, "x", 1.5, True, None])
def test_the_values_the_application_caches_read_back_as_json(tmp_path, value):
    cache = configured_cache(tmp_path)
    cache.set("v", value, 60)
    assert cache.get("v", "miss") == value
    cache.set("n", 0, 60)
    assert cache.incr("n") == 1 and cache.get("n") == 1
    assert cache.touch("v", 60) is True and cache.get("v", "miss") == value
    cache.set("gone", 1, -1)
    assert cache.get("gone") is None
