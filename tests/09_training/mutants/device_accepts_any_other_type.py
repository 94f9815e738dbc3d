"""pick_device checks cuda and mps only and returns any other device as it is: pick_device("meta") gives a device nothing can train on."""

EXPECT = r"no other type ever does"

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
    if device.type == "cuda" and not (torch.cuda.is_available() and (device.index or 0) < torch.cuda.device_count()):
        raise RuntimeError(f"device {str(device)!r} is not available; available: {names}")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise RuntimeError(f"device {str(device)!r} is not available; available: {names}")
    return device
