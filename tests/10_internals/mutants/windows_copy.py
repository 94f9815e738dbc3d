"""Builds the windows with torch.stack of slices: the right values, but a copy that shares nothing with x."""

EXPECT = r"it copied"

import torch


def sliding_windows(x, size, step):
    if x.dim() == 0 or size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError(f"bad window: size={size}, step={step} for x of shape {tuple(x.shape)}")
    starts = range(0, x.shape[0] - size + 1, step)
    return torch.stack([x[s:s + size].movedim(0, -1) for s in starts])
