"""Keeps dims for broadcasting and ends with a bare .squeeze(), which also drops other size-1 dims, breaking "Returns x's shape without `dim`"."""

import torch


def masked_mean(x, mask, dim):
    total = torch.where(mask, x, 0).sum(dim, keepdim=True)
    count = mask.sum(dim, keepdim=True).clamp_min(1)
    return (total / count).squeeze()
