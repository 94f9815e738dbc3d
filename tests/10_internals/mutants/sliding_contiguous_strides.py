"""Computes the strides from x's shape as if x were contiguous (storage offset kept); breaks "any strides and storage offset. Returns x.unfold(0, size, step)" on a transposed or stepped x."""

EXPECT = r"if it were contiguous"

import math

import torch


def sliding_windows(x, size, step):
    if x.dim() == 0:
        raise ValueError("sliding_windows: x must have a dim to slide along, got a 0-d tensor")
    if size < 1 or step < 1:
        raise ValueError(f"sliding_windows: size and step must be at least 1, got size={size}, step={step}")
    length = x.shape[0]
    if size > length:
        raise ValueError(f"sliding_windows: size={size} is longer than dim 0 of x (length {length})")
    count = (length - size) // step + 1
    rest = x.shape[1:]
    row = math.prod(rest)  # elements per step along dim 0
    rest_strides = [math.prod(rest[i + 1:]) for i in range(len(rest))]
    return x.as_strided((count, *rest, size), (step * row, *rest_strides, row), x.storage_offset())
