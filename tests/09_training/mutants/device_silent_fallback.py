"""pick_device falls back to the CPU when the device asked for is missing: the mistake goes unnoticed."""

EXPECT = r"silent fallback"

import torch

_reference = pick_device  # noqa: F821 (the reference's)


def pick_device(prefer=None):
    try:
        return _reference(prefer)
    except RuntimeError:
        return torch.device("cpu")
