"""Computes the strides from the shape, as if x were contiguous: wrong for x[::2], a transpose or x[:, 1]."""

EXPECT = r"if it were contiguous"

import math


def sliding_windows(x, size, step):
    if x.dim() == 0 or size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError(f"bad window: size={size}, step={step} for x of shape {tuple(x.shape)}")
    count = (x.shape[0] - size) // step + 1
    rest = x.shape[1:]
    inner = [math.prod(rest[i + 1:]) for i in range(len(rest))]  # row-major strides of x[0]
    along = math.prod(rest)
    return x.as_strided((count, *rest, size), (step * along, *inner, along), x.storage_offset())
