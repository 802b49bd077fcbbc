# syntax=docker/dockerfile:1
# The FrameLedger image: every service of deploy/compose.yaml runs it (docs/deploy.md, "The image").
#   docker build -t frameledger:latest .
#   docker build --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 -t frameledger:gpu .
#   bin/run-image   (podman, a local bookworm base made with mmdebstrap; docs/deploy.md, "The image")
# Two stages: the builder makes .venv with bin/setup-env (the script CI uses); the runtime stage
# gets the Debian packages from deploy/image-setup (the script bin/test runs), the venv and the code.

# BASE: any Debian bookworm with python3.11 and its venv module; the official Python image by
# default. bin/run-image builds one with mmdebstrap where no registry of images can be reached.
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS builder
# The CPU torch wheel by default (the CUDA one is ~3 GB more); a GPU image passes its own index.
# PIP_FIND_LINKS: a folder of wheels mounted into the build (bin/run-image: the CPU torch wheel
# that lies on the build host), with TORCH_INDEX empty when that index cannot be reached.
# PIP_CERT: a CA bundle mounted into the build, where the build host reaches PyPI through a
# TLS-inspecting proxy. Build arguments are environment variables of the RUN steps only, never
# of the image; an empty one is unset before pip reads it.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY requirements.txt requirements-dev.txt ./
COPY bin/setup-env bin/setup-env
RUN export PIP_EXTRA_INDEX_URL="$TORCH_INDEX" \
 && for name in PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_CERT; do eval "[ -n \"\$$name\" ]" || unset "$name"; done \
 && PYTHON=python3.11 bin/setup-env requirements.txt \
 && find .venv -name __pycache__ -prune -exec rm -rf {} + \
 && rm -rf .venv/lib/python3.11/site-packages/torch/include

FROM ${BASE} AS runtime
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
