"""Calls x.contiguous() first, which copies a non-contiguous x, so the windows no longer share x's storage; breaks "A view made with as_strided: it shares x's storage (no copy), so a write to x shows in it"."""

EXPECT = r"it copied"

import torch


def sliding_windows(x, size, step):
    if x.dim() == 0:
        raise ValueError("sliding_windows: x must have a dim to slide along, got a 0-d tensor")
    if size < 1 or step < 1:
        raise ValueError(f"sliding_windows: size and step must be at least 1, got size={size}, step={step}")
    length = x.shape[0]
    if size > length:
        raise ValueError(f"sliding_windows: size={size} is longer than dim 0 of x (length {length})")
    x = x.contiguous()  # make the stride arithmetic simple
    count = (length - size) // step + 1
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along, *x.stride()[1:], along), x.storage_offset())
