"""FrameLedger settings, read from environment variables (see .env.example).

Defaults give a one-machine installation: SQLite, an in-memory channel layer and a
Celery broker kept in a SQLite file (kombu's SQLAlchemy transport), so a real worker
runs without any server. ``DATABASE_URL`` switches to PostgreSQL; ``REDIS_URL`` moves
the Celery broker and the channel layer to Redis.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import csp.constants
from django.core.exceptions import ImproperlyConfigured

from deploy.env import envbool, envint, envlist, envstr, proxy_ssl_header
from deploy.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("FRAMELEDGER_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DJANGO_DEBUG", False)
SECRET_KEY = envstr("DJANGO_SECRET_KEY", "insecure-local-only-key" if DEBUG else None)
ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "csp",
    "annotator",
    "frontend",
]

MIDDLEWARE = [
    "deploy.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "annotator.base.text_guard.NulQueryStringMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "annotator.base.compression.JsonGZipMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "annotator.base.unavailable.DatabaseUnavailableMiddleware",
]

# Content-Security-Policy (django-csp): scripts from this origin, and inline module scripts only
# with the per-response nonce the templates give them (``nonce="{{ request.csp_nonce }}"``); no
# inline event handlers, no eval, nothing from other origins, no framing. Inline styles stay
# allowed (style attributes cannot carry a nonce). WebSockets: 'self' covers ws(s) to this host.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.constants.SELF],
        "script-src": [csp.constants.SELF, csp.constants.NONCE],
        "style-src": [csp.constants.SELF, csp.constants.UNSAFE_INLINE],
        "img-src": [csp.constants.SELF, "data:"],
        "media-src": [csp.constants.SELF],
        "connect-src": [csp.constants.SELF],
        "font-src": [csp.constants.SELF],
        "object-src": [csp.constants.NONE],
        "base-uri": [csp.constants.SELF],
        "form-action": [csp.constants.SELF],
        "frame-ancestors": [csp.constants.NONE],
    }
}

ROOT_URLCONF = "deploy.urls"
WSGI_APPLICATION = "deploy.wsgi.application"
ASGI_APPLICATION = "deploy.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotator.entry.pages.context.nav",
            ],
        },
    },
]


def pool_options(size: int) -> dict:
    """``DATABASE_POOL_SIZE=N`` (N > 0): each process keeps a psycopg pool of up to N
    connections (Django's ``pool`` option, psycopg-pool), instead of one connection per
    request (``CONN_MAX_AGE`` must then stay 0)."""
    if size <= 0:
        return {}
    return {"pool": {"min_size": 1, "max_size": size, "timeout": envint("DATABASE_POOL_TIMEOUT", 10)}}


def database_from_url(url: str) -> dict:
    """Translate ``postgres://user:pass@host:port/name`` or ``sqlite:///path``."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        name = unquote(parsed.path[1:] if parsed.path.startswith("//") else parsed.path)
        # IMMEDIATE: every transaction takes the write lock at BEGIN, so concurrent writers
        # wait for each other (busy timeout) instead of failing to upgrade a read lock; the
        # audit chain's append relies on it (annotator/models/audit_log.py).
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name or ":memory:",
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    if parsed.scheme in {"postgres", "postgresql"}:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": envint("DATABASE_CONN_MAX_AGE", 0),
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": pool_options(envint("DATABASE_POOL_SIZE", 0)),
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parsed.scheme!r} is not supported (sqlite, postgres)")


DATABASE_URL = envstr("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "frameledger.sqlite3"),
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Password sign-in counts failures and locks out (annotator/base/login_guard.py).
AUTHENTICATION_BACKENDS = ["annotator.base.login_guard.ThrottledModelBackend"]
FRAMELEDGER_LOGIN_CACHE = "default"
FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER = envint("FRAMELEDGER_LOGIN_MAX_FAILURES_PER_USER", 5)
FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP = envint("FRAMELEDGER_LOGIN_MAX_FAILURES_PER_IP", 20)
FRAMELEDGER_LOGIN_WINDOW_SECONDS = envint("FRAMELEDGER_LOGIN_WINDOW_SECONDS", 15 * 60)
FRAMELEDGER_LOGIN_LOCKOUT_SECONDS = envint("FRAMELEDGER_LOGIN_LOCKOUT_SECONDS", 15 * 60)
FRAMELEDGER_LOGIN_MAX_FAILURES_PER_ACCOUNT = envint("FRAMELEDGER_LOGIN_MAX_FAILURES_PER_ACCOUNT", 50)
FRAMELEDGER_LOGIN_SLOW_SECONDS = envint("FRAMELEDGER_LOGIN_SLOW_SECONDS", 10)
FRAMELEDGER_LOGIN_KNOWN_SECONDS = envint("FRAMELEDGER_LOGIN_KNOWN_SECONDS", 30 * 24 * 3600)
# API tokens (annotator/entry/api/tokens.py) stop working this long after they are issued.
FRAMELEDGER_TOKEN_TTL_SECONDS = envint("FRAMELEDGER_TOKEN_TTL_SECONDS", 30 * 24 * 3600)
FRAMELEDGER_TOKENS_PER_PERSON = envint("FRAMELEDGER_TOKENS_PER_PERSON", 10)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves the collected files (bin/run-demo runs collectstatic); with finders,
# straight from the apps' static folders, which the test suite uses.
WHITENOISE_USE_FINDERS = envbool("WHITENOISE_USE_FINDERS", DEBUG)
MEDIA_ROOT = Path(envstr("FRAMELEDGER_MEDIA_ROOT", str(VAR_DIR / "media")))
# The append-only file the audit chain head is anchored in after every write (annotator.base.anchor_log);
# empty: VAR_DIR/anchors/audit-anchors.log, outside MEDIA_ROOT and the database.
FRAMELEDGER_AUDIT_ANCHOR = envstr("FRAMELEDGER_AUDIT_ANCHOR", "")
# The Ed25519 key every audit entry is signed with (annotator.base.signing): the environment
# secret FRAMELEDGER_SIGNING_KEY (read there, never kept in the settings), else this file,
# made on first use, readable by the service user only; outside MEDIA_ROOT and the database.
FRAMELEDGER_SIGNING_KEY_FILE = envstr("FRAMELEDGER_SIGNING_KEY_FILE", "") or str(VAR_DIR / "keys" / "signing-key.pem")
# Every public key that ever signed, by key id (default: public-keys.json beside the key file).
FRAMELEDGER_PUBLIC_KEYS_FILE = envstr("FRAMELEDGER_PUBLIC_KEYS_FILE", "")
# Largest upload accepted for a source video, in bytes.
FRAMELEDGER_MAX_VIDEO_BYTES = envint("FRAMELEDGER_MAX_VIDEO_BYTES", 8 * 1024**3)
# Largest submission upload (one request: files or a zip), in bytes.
FRAMELEDGER_MAX_SUBMISSION_UPLOAD_BYTES = envint("FRAMELEDGER_MAX_SUBMISSION_UPLOAD_BYTES", 2 * 1024**3)
# Request bodies (deploy/body_limits.py): a small limit everywhere, checked before
# authentication; the upload routes below (path regex, bytes) are the only exceptions.
FRAMELEDGER_MAX_BODY_BYTES = envint("FRAMELEDGER_MAX_BODY_BYTES", 2 * 1024**2)
MULTIPART_SLACK_BYTES = 1024**2  # form fields and part headers around an uploaded file
# The largest piece of a resumable upload (PATCH /api/uploads/<key>/); the page sends 8 MiB.
FRAMELEDGER_UPLOAD_PIECE_BYTES = envint("FRAMELEDGER_UPLOAD_PIECE_BYTES", 64 * 1024**2)
# An unfinished resumable upload untouched this long is removed with its bytes (the ingest sweep).
FRAMELEDGER_UPLOAD_EXPIRE_SECONDS = envint("FRAMELEDGER_UPLOAD_EXPIRE_SECONDS", 86400)
FRAMELEDGER_UPLOAD_PATHS = [
    (r"^/api/videos/$", FRAMELEDGER_MAX_VIDEO_BYTES + MULTIPART_SLACK_BYTES),
    (r"^/api/packets/[0-9]+/submissions/$", FRAMELEDGER_MAX_SUBMISSION_UPLOAD_BYTES + MULTIPART_SLACK_BYTES),
    # One piece of a resumable upload (annotator/entry/api/uploads.py, the tus protocol).
    (r"^/api/uploads/[0-9a-f]{32}/$", FRAMELEDGER_UPLOAD_PIECE_BYTES),
]
# Deepest nesting of arrays/objects accepted in a JSON request body.
FRAMELEDGER_MAX_JSON_DEPTH = envint("FRAMELEDGER_MAX_JSON_DEPTH", 64)
# Under WSGI, Django's own cap on non-file request data (files stream to disk).
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", FRAMELEDGER_MAX_BODY_BYTES)
# Proxy encodes longer than this many frames are split into chunks that Celery workers
# encode in parallel (docs/media.md); 0 = always one pass.
FRAMELEDGER_INGEST_CHUNK_FRAMES = envint("FRAMELEDGER_INGEST_CHUNK_FRAMES", 1800)
# Annotate first: a browser-playable source is remuxed (seconds) and ready for annotation
# before its proxy is encoded in the background (docs/media.md §2.4). 0 = proxy first.
FRAMELEDGER_INGEST_REMUX_FIRST = bool(envint("FRAMELEDGER_INGEST_REMUX_FIRST", 1))
# Chunk leases (docs/media.md §2.1): a chunk (or join) whose worker has not renewed its
# lease for this long is queued again by the periodic sweep, run every SWEEP seconds by
# Celery beat (`celery -A deploy worker -B`, or a separate `celery -A deploy beat`).
# A piece sent MAX_ATTEMPTS times and lost again ends the ingest failed, with the reason.
FRAMELEDGER_INGEST_LEASE_SECONDS = envint("FRAMELEDGER_INGEST_LEASE_SECONDS", 40)
FRAMELEDGER_INGEST_SWEEP_SECONDS = envint("FRAMELEDGER_INGEST_SWEEP_SECONDS", 10)
FRAMELEDGER_INGEST_MAX_ATTEMPTS = envint("FRAMELEDGER_INGEST_MAX_ATTEMPTS", 5)
# Scoring batch leases (docs/grading.md, "When a worker or the broker is lost"): a batch
# whose worker has not renewed its lease for LEASE seconds, or that no worker took while no
# scoring worker showed a sign of life for as long, is sent again by the sweep (every SWEEP
# seconds); after MAX_ATTEMPTS sends the run ends failed, with the reason.
FRAMELEDGER_SCORING_LEASE_SECONDS = envint("FRAMELEDGER_SCORING_LEASE_SECONDS", 30)
FRAMELEDGER_SCORING_SWEEP_SECONDS = envint("FRAMELEDGER_SCORING_SWEEP_SECONDS", 10)
FRAMELEDGER_SCORING_MAX_ATTEMPTS = envint("FRAMELEDGER_SCORING_MAX_ATTEMPTS", 5)
# An agreement or calibration job unchanged this long while queued or running is sent again
# (annotator/actions/derived_sweep.py), at most MAX_ATTEMPTS times in all, then it ends failed.
FRAMELEDGER_DERIVED_STALE_SECONDS = envint("FRAMELEDGER_DERIVED_STALE_SECONDS", 120)
FRAMELEDGER_DERIVED_MAX_ATTEMPTS = envint("FRAMELEDGER_DERIVED_MAX_ATTEMPTS", 3)
# Where uploaded and derived media live (Django's STORAGES): a local folder by default, which
# may be a shared volume (NFS, a mounted bucket) so that web and worker machines see the same
# files. FRAMELEDGER_STORAGE_BACKEND / FRAMELEDGER_STORAGE_OPTIONS (JSON) choose another
# backend, e.g. django-storages' S3 storage mounted through a POSIX layer (docs/deploy.md).
STORAGES = {
    "default": {
        # Django's FileSystemStorage, writing under a temporary name renamed once whole
        # (annotator/base/disk.py): a write that fails half-way (ENOSPC) leaves nothing.
        "BACKEND": envstr("FRAMELEDGER_STORAGE_BACKEND", "annotator.base.disk.AtomicFileSystemStorage"),
        "OPTIONS": json.loads(envstr("FRAMELEDGER_STORAGE_OPTIONS", "{}")),
    },
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Bytes kept free on the media and upload-spool file systems: an upload (its declared length,
# checked before its body is read: deploy/body_limits.py) that would leave less is refused
# with 507 and a JSON error naming the folder (annotator/base/disk.py, docs/deploy.md).
FRAMELEDGER_DISK_RESERVE_BYTES = envint("FRAMELEDGER_DISK_RESERVE_BYTES", 64 * 1024**2)
# When set (e.g. "/_media/"), media files are answered with X-Accel-Redirect to this
# internal nginx location (deploy/nginx.py), so nginx sends the bytes and answers Range.
FRAMELEDGER_MEDIA_ACCEL_PREFIX = envstr("FRAMELEDGER_MEDIA_ACCEL_PREFIX", "")
# Client addresses or networks that may read /metrics (deploy/health.py; nginx uses the same list).
FRAMELEDGER_METRICS_ALLOW = envlist("FRAMELEDGER_METRICS_ALLOW", ["127.0.0.1", "::1"])
FILE_UPLOAD_MAX_MEMORY_SIZE = envint("FILE_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024**2)
# The most bytes one answer to an open-ended media range (``Range: bytes=N-``) carries
# (annotator/base/media/ranges.py); the player asks for the next range when it needs it.
FRAMELEDGER_MEDIA_RANGE_BYTES = envint("FRAMELEDGER_MEDIA_RANGE_BYTES", 8 * 1024**2)
# Seconds a video keeps its remux once the proxy replaced it (annotator/actions/remux_retention.py);
# negative: keep it.
FRAMELEDGER_REMUX_KEEP_SECONDS = envint("FRAMELEDGER_REMUX_KEEP_SECONDS", 600)

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# HTTPS (docs/deploy.md lists the production values; `manage.py check --deploy` is then clean).
SESSION_COOKIE_SECURE = envbool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = envbool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("DJANGO_SECURE_HSTS_PRELOAD", False)
SECURE_PROXY_SSL_HEADER = proxy_ssl_header(envstr("DJANGO_SECURE_PROXY_SSL_HEADER", ""))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "annotator.entry.api.authentication.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "annotator.entry.api.body.JSONObjectParser",
        "annotator.entry.api.parsers.NulFreeFormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "annotator.entry.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "annotator.entry.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "FrameLedger API",
    "DESCRIPTION": "Packets, blind ledgers, freeze, union, adjudication, ground-truth versions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # <id:…> path parameters (annotator/base/urlconverters.py): integers of 1-18 digits
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
}

REDIS_URL = envstr("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": envstr("CHANNELS_PREFIX", "frameledger")},
        }
    }
    CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", REDIS_URL)
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}")

# The cache holds the sign-in failure counts, so it must be shared by every web process:
# Redis when REDIS_URL is set, otherwise files under FRAMELEDGER_VAR_DIR (one machine).
# Values are JSON, never pickle (deploy/cache.py): reading a planted entry must run nothing.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": envstr("CACHE_URL", REDIS_URL),
            "KEY_PREFIX": envstr("CACHE_PREFIX", "frameledger"),
            "OPTIONS": {"serializer": "deploy.cache.JSONSerializer"},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "deploy.cache.JSONFileCache",
            "LOCATION": envstr("CACHE_DIR", str(VAR_DIR / "cache")),
        }
    }

# Job state lives in the application database (annotator.Job), so results need no backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = envstr("CELERY_QUEUE", "frameledger")
# Redis (and SQS) hand an unacknowledged message to another worker after this many
# seconds. Tasks are acknowledged late (above), so it must exceed the longest task (a
# one-pass proxy of a long source), or a task still running would be started twice. A
# killed worker's chunk does not wait for it: its lease runs out and the sweep re-queues it.
CELERY_VISIBILITY_TIMEOUT = envint("CELERY_VISIBILITY_TIMEOUT", 6 * 3600)
# CELERY_UNACKED_RESTORE_INTERVAL: how often (seconds) a Redis worker looks for such messages.
# (Only for brokers that have these options: the SQLAlchemy transport hands its options to the engine.)
_broker_scheme = CELERY_BROKER_URL.split(":", 1)[0]
if _broker_scheme in {"redis", "rediss", "sentinel", "sqs"}:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
if _broker_scheme in {"redis", "rediss", "sentinel"}:
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        unacked_restore_interval=envint("CELERY_UNACKED_RESTORE_INTERVAL", 10), unacked_restore_throttle=1
    )
CELERY_BEAT_SCHEDULE = {
    "ingest-sweep": {"task": "annotator.ingest_sweep", "schedule": float(FRAMELEDGER_INGEST_SWEEP_SECONDS)},
    # Scoring batches whose worker vanished or whose message was lost are sent again.
    "scoring-sweep": {"task": "annotator.scoring_sweep", "schedule": float(FRAMELEDGER_SCORING_SWEEP_SECONDS)},
    "derived-sweep": {"task": "annotator.derived_sweep", "schedule": float(FRAMELEDGER_SCORING_SWEEP_SECONDS)},
    # Bundle runs whose worker died (no heartbeat for FRAMELEDGER_BUNDLE_LEASE_SECONDS) end in error.
    "bundle-sweep": {
        "task": "annotator.bundle_sweep",
        "schedule": float(envint("FRAMELEDGER_BUNDLE_SWEEP_SECONDS", 60)),
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = envstr("CELERY_BEAT_SCHEDULE_FILENAME", str(VAR_DIR / "celerybeat-schedule"))
# Ingest tasks (annotator.ingest_video, .ingest_proxy, .ingest_chunk, .ingest_join,
# .ingest_sweep, .ingest_full) go
# to this queue when it is set (start workers with -Q <it>); unset, they share the
# default queue, so one worker serves everything.
FRAMELEDGER_INGEST_QUEUE = envstr("FRAMELEDGER_INGEST_QUEUE", "")
# The same for scoring (annotator.score_batch) and retrieval (annotator.build_search_index).
FRAMELEDGER_SCORING_QUEUE = envstr("FRAMELEDGER_SCORING_QUEUE", "")
FRAMELEDGER_RETRIEVAL_QUEUE = envstr("FRAMELEDGER_RETRIEVAL_QUEUE", "")
CELERY_TASK_ROUTES = {
    pattern: {"queue": queue}
    for pattern, queue in (
        ("annotator.ingest_*", FRAMELEDGER_INGEST_QUEUE),
        ("annotator.score_*", FRAMELEDGER_SCORING_QUEUE),
        ("annotator.build_search_index", FRAMELEDGER_RETRIEVAL_QUEUE),
    )
    if queue
}
# Structured logs (deploy/logs.py): LOG_FORMAT=json (default) or text.
# LOG_FILE: every record in that file too; then LOG_CONSOLE_LEVEL and LOG_CONSOLE_INFO (logger
# prefixes shown at INFO) choose what the console keeps.
LOG_FILE = envstr("LOG_FILE", "")
LOGGING = logging_config(
    envstr("LOG_FORMAT", "json"),
    envstr("LOG_LEVEL", "INFO"),
    log_file=LOG_FILE,
    console_level=envstr("LOG_CONSOLE_LEVEL", ""),
    console_info=envstr("LOG_CONSOLE_INFO", ""),
    periodic_tasks=tuple(entry["task"] for entry in CELERY_BEAT_SCHEDULE.values()),
)

# Submission zip archives (annotator/base/grading/uploads.py): an archive over any cap is
# refused with a 400 before or while it is inflated.
FRAMELEDGER_ZIP_MAX_ENTRIES = envint("FRAMELEDGER_ZIP_MAX_ENTRIES", 10_000)
FRAMELEDGER_ZIP_MAX_ENTRY_BYTES = envint("FRAMELEDGER_ZIP_MAX_ENTRY_BYTES", 64 * 1024**2)
FRAMELEDGER_ZIP_MAX_TOTAL_BYTES = envint("FRAMELEDGER_ZIP_MAX_TOTAL_BYTES", 512 * 1024**2)
FRAMELEDGER_ZIP_MAX_RATIO = envint("FRAMELEDGER_ZIP_MAX_RATIO", 200)

# Executable moment-search bundles (annotator/base/grading/sandbox.py, docs/grading.md). Stage
# limits are the seed's; they are pinned on each BundleRun when it is queued.
FRAMELEDGER_BUNDLE_QUEUE = envstr("FRAMELEDGER_BUNDLE_QUEUE", "frameledger-bundles")
FRAMELEDGER_BUNDLE_GPU_QUEUE = envstr("FRAMELEDGER_BUNDLE_GPU_QUEUE", "gpu")
FRAMELEDGER_BUNDLE_BUILD_SECONDS = envint("FRAMELEDGER_BUNDLE_BUILD_SECONDS", 3600)
FRAMELEDGER_BUNDLE_CALL_SECONDS = envint("FRAMELEDGER_BUNDLE_CALL_SECONDS", 2700)
FRAMELEDGER_BUNDLE_REQUESTS_PER_CALL = envint("FRAMELEDGER_BUNDLE_REQUESTS_PER_CALL", 250)
FRAMELEDGER_BUNDLE_PROCESSES = envint("FRAMELEDGER_BUNDLE_PROCESSES", 512)
FRAMELEDGER_BUNDLE_FILE_BYTES = envint("FRAMELEDGER_BUNDLE_FILE_BYTES", 16 * 1024**3)
FRAMELEDGER_BUNDLE_MEMORY_BYTES = envint("FRAMELEDGER_BUNDLE_MEMORY_BYTES", 32 * 1024**3)
FRAMELEDGER_BUNDLE_LOG_BYTES = envint("FRAMELEDGER_BUNDLE_LOG_BYTES", 256 * 1024)
FRAMELEDGER_BUNDLE_MAX_BYTES = envint("FRAMELEDGER_BUNDLE_MAX_BYTES", 256 * 1024**2)
# What a bundle's zip may inflate to in all (checked while inflating; the ratio cap is
# FRAMELEDGER_ZIP_MAX_RATIO, as for submission archives).
FRAMELEDGER_BUNDLE_MAX_INFLATED_BYTES = envint("FRAMELEDGER_BUNDLE_MAX_INFLATED_BYTES", 1024**3)
# Per stage: the memory cgroup's limit (where the host has one); per job: the size and the inode
# count of its own filesystem (its writable folders; ENOSPC past them); and the size of each
# private tmpfs (/tmp, /var/tmp, /dev/shm) inside.
FRAMELEDGER_BUNDLE_CGROUP_MEMORY_BYTES = envint("FRAMELEDGER_BUNDLE_CGROUP_MEMORY_BYTES", 16 * 1024**3)
FRAMELEDGER_BUNDLE_DISK_BYTES = envint("FRAMELEDGER_BUNDLE_DISK_BYTES", 16 * 1024**3)
FRAMELEDGER_BUNDLE_DISK_ENTRIES = envint("FRAMELEDGER_BUNDLE_DISK_ENTRIES", 200_000)
FRAMELEDGER_BUNDLE_TMPFS_BYTES = envint("FRAMELEDGER_BUNDLE_TMPFS_BYTES", 256 * 1024**2)
# A running bundle's worker renews its heartbeat every 10 s; a run whose heartbeat is older
# than this is ended (error) by the beat sweep, and its redelivered message may run it again.
FRAMELEDGER_BUNDLE_LEASE_SECONDS = envint("FRAMELEDGER_BUNDLE_LEASE_SECONDS", 120)
# Moment annotation imports: the .jsonl and its re-annotation CSVs, each at most 64 MiB
# (annotator.base.moment_sources.MAX_FILE_BYTES, checked by the import itself); this is the
# body that carries them, through the API or the import page's dry run.
FRAMELEDGER_MAX_MOMENT_IMPORT_BYTES = envint("FRAMELEDGER_MAX_MOMENT_IMPORT_BYTES", 4 * 64 * 1024**2)
# The upload routes above take large bodies too (deploy/body_limits.py).
FRAMELEDGER_UPLOAD_PATHS += [
    (r"^/api/versions/[0-9]+/bundles/$", FRAMELEDGER_BUNDLE_MAX_BYTES + MULTIPART_SLACK_BYTES),
    (r"^/api/moment-imports/$", FRAMELEDGER_MAX_MOMENT_IMPORT_BYTES + MULTIPART_SLACK_BYTES),
    (r"^/imports/moments/$", FRAMELEDGER_MAX_MOMENT_IMPORT_BYTES + MULTIPART_SLACK_BYTES),
    # Uploaded CLIP features of a video's moment-search index (annotator.actions.search).
    (r"^/api/videos/[0-9]+/search-index/$", 2 * 512 * 1024**2 + MULTIPART_SLACK_BYTES),
]
# Each bundle job runs as a uid of its own (and the group of the same number), leased from
# this range for the job's duration: uids no account on the host uses.
FRAMELEDGER_SANDBOX_UIDS = envstr("FRAMELEDGER_SANDBOX_UIDS", "2000000-2000999")
FRAMELEDGER_SANDBOX_DIR = envstr("FRAMELEDGER_SANDBOX_DIR", "")  # default: the system temporary folder
# Text encoder of the retrieval reference row in moment calibrations (docs/retrieval.md
# "Text encoders"): hash fits synthetic features only; real CLIP features need a
# precomputed:PATH or python:module:factory encoder whose weights are on disk.
FRAMELEDGER_RETRIEVAL_ENCODER = envstr("FRAMELEDGER_RETRIEVAL_ENCODER", "hash")
# The locally installed visual encoder of the moment-search index, as
# "package.module:factory" (weights already on disk; nothing is ever downloaded).
# factory() returns an object with encode_frames(N x H x W x 3 uint8) -> N x D and,
# optionally, encode_text(list[str]) -> N x D in the same space. Unset: videos without
# uploaded features get the embedded low-level descriptor (search by example only).
FRAMELEDGER_SEARCH_ENCODER = envstr("FRAMELEDGER_SEARCH_ENCODER", "")
# Seconds per clip of the index built from the video itself (encoder or descriptor).
FRAMELEDGER_SEARCH_CLIP_SECONDS = float(envstr("FRAMELEDGER_SEARCH_CLIP_SECONDS", "1.0"))
