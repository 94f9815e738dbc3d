"""Flattens with view after movedim, which fails on non-contiguous inputs and masks."""
import torch


def masked_mean(x, mask, dim):
    xm = torch.where(mask, x, 0).movedim(dim, -1)
    m = mask.movedim(dim, -1)
    total = xm.view(-1, xm.shape[-1]).sum(-1).view(xm.shape[:-1]) if xm.dim() else xm
    count = m.reshape(-1, m.shape[-1]).sum(-1).reshape(m.shape[:-1]) if m.dim() else m.long()
    return total / count.clamp_min(1)
