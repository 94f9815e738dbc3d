"""Handles empty slices with torch.where(count > 0, total / count, torch.zeros(...)) where the zeros live on the default (CPU) device, breaking "every result is on the input's device"."""
EXPECT = r"default device"

import torch


def masked_mean(x, mask, dim):
    total = torch.where(mask, x, 0).sum(dim)
    count = mask.sum(dim)
    return torch.where(count > 0, total / count, torch.zeros(total.shape, dtype=x.dtype))
