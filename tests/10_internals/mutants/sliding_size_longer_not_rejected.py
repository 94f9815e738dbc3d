"""Validates only size/step < 1, so a window longer than dim 0 yields an empty result (or an as_strided error) instead of ValueError; breaks "Raises ValueError if ... size > len(x)"."""

import torch


def sliding_windows(x, size, step):
    if x.dim() == 0:
        raise ValueError("sliding_windows: x must have a dim to slide along, got a 0-d tensor")
    if size < 1 or step < 1:
        raise ValueError(f"sliding_windows: size and step must be at least 1, got size={size}, step={step}")
    count = max((x.shape[0] - size) // step + 1, 0)
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along, *x.stride()[1:], along), x.storage_offset())
