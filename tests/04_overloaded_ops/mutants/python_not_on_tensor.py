"""Flags empty rows with Python's `not`, which calls bool() on a tensor: RuntimeError for more than one row."""
EXPECT = r"`and`, `or`, `not`"

import torch


def masked_mean(x, mask, dim):
    total = torch.where(mask, x, 0).sum(dim)
    count = mask.sum(dim)
    empty = not count.bool()  # means `~count.bool()`; `not` cannot be overloaded
    return torch.where(empty, 0, total / count)
