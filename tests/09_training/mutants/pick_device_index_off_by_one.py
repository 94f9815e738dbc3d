"""pick_device accepts "cuda:i" when i == device_count (off by one); breaks "torch.device(prefer) unchanged if that device exists here (for "cuda:i": i < torch.cuda.device_count()), else a RuntimeError"."""

EXPECT = r"i < device_count\(\)"

import torch


def pick_device(prefer=None):
    if prefer is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(prefer)
    if device.type == "cpu":
        return device
    if device.type == "cuda" and torch.cuda.is_available():
        if device.index is None or device.index <= torch.cuda.device_count():
            return device
    if device.type == "mps" and torch.backends.mps.is_available():
        return device
    names = ", ".join(str(d) for d in _available_devices())
    raise RuntimeError(f"device {str(device)!r} is not available; available: {names}")
