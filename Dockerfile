# syntax=docker/dockerfile:1
# The FrameLedger image: every service of deploy/compose.yaml runs it (docs/deploy.md, "The image").
#   docker build -t frameledger:latest .
#   docker build --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 -t frameledger:gpu .
# Two stages: the builder makes .venv with bin/setup-env (the script CI uses); the runtime stage
# gets the Debian packages from deploy/image-setup (the script bin/test runs), the venv and the code.

FROM python:3.11-slim-bookworm AS builder
# The CPU torch wheel by default (the CUDA one is ~3 GB more); a GPU image passes its own index.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PIP_EXTRA_INDEX_URL=${TORCH_INDEX} PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY requirements.txt requirements-dev.txt ./
COPY bin/setup-env bin/setup-env
RUN PYTHON=python3.11 bin/setup-env requirements.txt \
 && find .venv -name __pycache__ -prune -exec rm -rf {} + \
 && rm -rf .venv/lib/python3.11/site-packages/torch/include

FROM python:3.11-slim-bookworm AS runtime
COPY deploy/image-setup /usr/local/sbin/frameledger-image-setup
RUN FRAMELEDGER_IMAGE_BUILD=1 frameledger-image-setup \
 && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin frameledger \
 && mkdir -p /srv/media /app/var /tmp/frameledger-metrics \
 && chown frameledger:frameledger /srv/media /app/var /tmp/frameledger-metrics
WORKDIR /app
COPY --from=builder /app/.venv /app/.venv
COPY --chown=root:root . /app
ENV PATH=/app/.venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=deploy.settings FRAMELEDGER_MEDIA_ROOT=/srv/media
# The code and venv belong to root and are read-only for the service user; only /srv/media,
# var/ and the metrics folder are writable. The bundles worker alone runs as root (compose), with
# bubblewrap, mount and e2fsprogs from deploy/image-setup: each job's own loop-mounted filesystem.
USER frameledger
EXPOSE 8000
CMD [".venv/bin/gunicorn", "-c", "deploy/gunicorn.conf.py", "deploy.asgi:application"]
