"""Builds the windows with NumPy's sliding_window_view on x.numpy(); breaks "a view made with as_strided" on x's device (bfloat16, meta, offset storage)."""

EXPECT = r"copied|meta device"

import numpy as np
import torch


def sliding_windows(x, size, step):
    if x.dim() == 0:
        raise ValueError("sliding_windows: x must have a dim to slide along, got a 0-d tensor")
    if size < 1 or step < 1:
        raise ValueError(f"sliding_windows: size and step must be at least 1, got size={size}, step={step}")
    if size > x.shape[0]:
        raise ValueError(f"sliding_windows: size={size} is longer than dim 0 of x (length {x.shape[0]})")
    view = np.lib.stride_tricks.sliding_window_view(x.numpy(), size, axis=0)[::step]
    return torch.from_numpy(view)
