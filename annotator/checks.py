"""System checks for the environment FrameLedger needs (``manage.py check``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.checks import Error, register


def ffmpeg_binary() -> str | None:
    """The FFmpeg executable (the one the imageio-ffmpeg wheel ships), or None."""
    try:
        import imageio_ffmpeg

        path = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # the package raises RuntimeError when no binary is usable
        return None
    return path if path and os.access(path, os.X_OK) else None


@register()
def check_media_tools(app_configs, **kwargs):
    errors = []
    try:
        import av  # noqa: F401
    except ImportError:
        errors.append(
            Error(
                "PyAV (the 'av' package) is not importable", hint="pip install -r requirements.txt", id="annotator.E001"
            )
        )
    if ffmpeg_binary() is None:
        errors.append(Error("ffmpeg not found", hint="install imageio-ffmpeg (requirements.txt)", id="annotator.E002"))
    return errors


@register()
def check_media_root(app_configs, **kwargs):
    """MEDIA_ROOT must exist (or be creatable) and accept a new file."""
    root = Path(settings.MEDIA_ROOT)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root):
            pass
    except OSError as exc:
        return [
            Error(f"MEDIA_ROOT {root} is not writable: {exc}", hint="set FRAMELEDGER_MEDIA_ROOT", id="annotator.E003")
        ]
    return []
