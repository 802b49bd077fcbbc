"""Device resolution, done once per predictor or trainer."""

from __future__ import annotations

import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda")


class DeviceUnavailableError(RuntimeError):
    """CUDA was asked for explicitly but is not available."""


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """``auto`` is CUDA when available, else CPU; ``cuda``/``cuda:N`` must exist."""
    if isinstance(name, torch.device):
        name = str(name)
    name = (name or "auto").strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise DeviceUnavailableError(f"device {name!r} requested but torch.cuda.is_available() is false")
        device = torch.device(name)
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceUnavailableError(f"device {name!r} does not exist")
        return device
    raise ValueError(f"unknown device {name!r} (choose auto, cpu or cuda)")
