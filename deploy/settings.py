"""FrameLedger settings, read from environment variables (see .env.example).

Defaults give a one-machine installation: SQLite, an in-memory channel layer and a
Celery broker kept in a SQLite file (kombu's SQLAlchemy transport), so a real worker
runs without any server. ``DATABASE_URL`` switches to PostgreSQL; ``REDIS_URL`` moves
the Celery broker and the channel layer to Redis.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from deploy.env import envbool, envint, envlist, envstr

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
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "annotator",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

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
            ],
        },
    },
]


def database_from_url(url: str) -> dict:
    """Translate ``postgres://user:pass@host:port/name`` or ``sqlite:///path``."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        name = unquote(parsed.path[1:] if parsed.path.startswith("//") else parsed.path)
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": name or ":memory:"}
    if parsed.scheme in {"postgres", "postgresql"}:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": envint("DATABASE_CONN_MAX_AGE", 0),
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
# Largest upload accepted for a source video, in bytes.
FRAMELEDGER_MAX_VIDEO_BYTES = envint("FRAMELEDGER_MAX_VIDEO_BYTES", 8 * 1024**3)
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", 20 * 1024**2)
FILE_UPLOAD_MAX_MEMORY_SIZE = envint("FILE_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024**2)

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

SESSION_COOKIE_SECURE = envbool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "annotator.api.body.JSONObjectParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "annotator.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "annotator.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "FrameLedger API",
    "DESCRIPTION": "Packets, blind ledgers, freeze, union, adjudication, ground-truth versions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
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

# Job state lives in the application database (annotator.Job), so results need no backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = envstr("CELERY_QUEUE", "frameledger")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

# Submission zip archives (annotator/grading/uploads.py): an archive over any cap is
# refused with a 400 before or while it is inflated.
FRAMELEDGER_ZIP_MAX_ENTRIES = envint("FRAMELEDGER_ZIP_MAX_ENTRIES", 10_000)
FRAMELEDGER_ZIP_MAX_ENTRY_BYTES = envint("FRAMELEDGER_ZIP_MAX_ENTRY_BYTES", 64 * 1024**2)
FRAMELEDGER_ZIP_MAX_TOTAL_BYTES = envint("FRAMELEDGER_ZIP_MAX_TOTAL_BYTES", 512 * 1024**2)
FRAMELEDGER_ZIP_MAX_RATIO = envint("FRAMELEDGER_ZIP_MAX_RATIO", 200)

# Executable moment-search bundles (annotator/grading/sandbox.py, docs/grading.md). Stage
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
FRAMELEDGER_SANDBOX_UID = envint("FRAMELEDGER_SANDBOX_UID", 65534)
FRAMELEDGER_SANDBOX_GID = envint("FRAMELEDGER_SANDBOX_GID", 65534)
FRAMELEDGER_SANDBOX_DIR = envstr("FRAMELEDGER_SANDBOX_DIR", "")  # default: the system temporary folder
# Paths the sandbox user must not be able to read; a bundle run is refused otherwise.
# The database file (SQLite) and the media root are always checked.
FRAMELEDGER_SANDBOX_SECRET_PATHS = [p for p in envstr("FRAMELEDGER_SANDBOX_SECRET_PATHS", "").split(":") if p]
# Text encoder of the retrieval reference row in moment calibrations (docs/retrieval.md
# "Text encoders"): hash fits synthetic features only; real CLIP features need a
# precomputed:PATH or python:module:factory encoder whose weights are on disk.
FRAMELEDGER_RETRIEVAL_ENCODER = envstr("FRAMELEDGER_RETRIEVAL_ENCODER", "hash")
