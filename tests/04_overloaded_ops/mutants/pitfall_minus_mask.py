"""Inverts the mask with `1 - mask` to zero the unselected entries: `-` on a bool tensor raises; `~mask` inverts it."""
EXPECT = r"~mask"

import torch


def masked_mean(x, mask, dim):
    total = x.masked_fill(1 - mask, 0).sum(dim)
    return total / mask.sum(dim).clamp_min(1)
