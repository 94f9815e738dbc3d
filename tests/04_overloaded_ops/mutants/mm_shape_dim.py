"""Reads x.shape[dim], which a 0-d x does not have (torch.mean(x, 0) takes it)."""
import torch


def masked_mean(x, mask, dim):
    n = x.shape[dim]
    total = torch.where(mask, x, 0).sum(dim)
    return total / mask.sum(dim).clamp_min(1)
