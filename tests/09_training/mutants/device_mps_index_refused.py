"""pick_device accepts "mps" but refuses "mps:0", the device an MPS tensor reports."""

import torch


def pick_device(prefer=None):
    if prefer is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(prefer)
    names = ", ".join(str(d) for d in _available_devices())  # noqa: F821
    if device.type == "cpu":
        return device
    if device.type == "cuda" and torch.cuda.is_available() and (device.index is None or device.index < torch.cuda.device_count()):
        return device
    if device.type == "mps" and torch.backends.mps.is_available() and device.index is None:
        return device
    raise RuntimeError(f"device {str(device)!r} is not available; available: {names}")
