"""pick_device's error names the device types there are ("cpu, cuda"), not the devices ("cpu, cuda:0, cuda:1")."""

import torch


def pick_device(prefer=None):
    if prefer is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(prefer)
    available = _available_devices()  # noqa: F821
    if any(d.type == device.type and (device.index is None or d.index in (None, device.index)) for d in available):
        return device
    names = ", ".join(sorted({d.type for d in available}))
    raise RuntimeError(f"device {str(device)!r} was asked for but is not available; available: {names}")
