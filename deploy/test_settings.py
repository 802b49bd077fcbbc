"""Settings for the test suite: the production settings with a test secret and
quick password hashing. The database, broker and channel layer still come from the
environment, so the same suite runs on SQLite and on PostgreSQL + Redis."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret")

from deploy.settings import *  # noqa: E402,F403

# The suite signs with a published test secret on purpose (refused by annotator.E020 anywhere else).
SILENCED_SYSTEM_CHECKS = ["annotator.E020"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not memory: tests that start a real Celery worker share it with the worker.
    # One file per test process, so two runs side by side never share a database.
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-frameledger-{os.getpid()}.sqlite3")}  # noqa: F405

# One cache per test process, emptied before each test (tests/conftest.py), so sign-in
# failure counts never carry from one test to the next. The Redis and file caches the
# settings choose are tested on their own (tests/http/test_login_throttling.py).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "frameledger-tests"}}
