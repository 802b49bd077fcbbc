"""Cache values as JSON, never pickle (``CACHES`` in ``deploy/settings.py``).

Django's file cache and Redis cache store values with ``pickle``, and unpickling runs code
chosen by whoever wrote the bytes: a file planted in the cache folder, or a key set by anyone
who can reach the Redis server, would run in the web process on the next read. The cache
holds sign-in failure counts and human scores (numbers, strings, lists and dicts), so JSON
holds all of it, and a JSON reader runs nothing. An entry that is not valid JSON is a miss
(and, in the file cache, removed).

- ``JSONFileCache``: Django's ``FileBasedCache`` with each file written as one line of JSON
  (the expiry time, or ``null``) followed by the zlib-compressed JSON of the value;
- ``JSONSerializer``: the Redis cache's serializer; integers stay plain integers, as Django's
  own serializer keeps them, so that ``incr`` stays atomic on the server.
"""

from __future__ import annotations

import json
import time
import zlib

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks


def dumps(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8")


def loads(data: bytes):
    return json.loads(data.decode("utf-8"))


class JSONSerializer:
    """For ``django.core.cache.backends.redis.RedisCache`` (``OPTIONS: {"serializer": …}``)."""

    def dumps(self, obj):
        if type(obj) is int:  # not bool: True must come back as True
            return obj
        return dumps(obj)

    def loads(self, data):
        try:
            return int(data)
        except ValueError:
            pass
        try:
            return loads(data)
        except ValueError:
            return None  # not ours: a miss, never code


class JSONFileCache(FileBasedCache):
    """``FileBasedCache`` with JSON in place of pickle (see the module docstring)."""

    cache_suffix = ".json.djcache"

    def _write_content(self, file, timeout, value):
        expiry = self.get_backend_timeout(timeout)
        file.write(dumps(expiry) + b"\n")
        file.write(zlib.compress(dumps(value)))

    def _read_value(self, f):
        try:
            return loads(zlib.decompress(f.read()))
        except (ValueError, zlib.error):
            return _INVALID

    def get(self, key, default=None, version=None):
        fname = self._key_to_file(key, version)
        try:
            with open(fname, "rb") as f:
                if not self._is_expired(f):
                    value = self._read_value(f)
                    if value is not _INVALID:
                        return value
                    f.close()
                    self._delete(fname)
        except FileNotFoundError:
            pass
        return default

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            with open(self._key_to_file(key, version), "r+b") as f:
                try:
                    locks.lock(f, locks.LOCK_EX)
                    if self._is_expired(f):
                        return False
                    value = self._read_value(f)
                    if value is _INVALID:
                        return False
                    f.seek(0)
                    f.truncate()
                    self._write_content(f, timeout, value)
                    return True
                finally:
                    locks.unlock(f)
        except FileNotFoundError:
            return False

    def _is_expired(self, f):
        """Whether the open cache file ``f`` has expired (or is not one of ours: removed)."""
        try:
            expiry = loads(f.readline())
            valid = expiry is None or isinstance(expiry, int | float)
        except ValueError:
            valid = False
        if not valid or (expiry is not None and expiry < time.time()):
            f.close()
            self._delete(f.name)
            return True
        return False


_INVALID = object()
