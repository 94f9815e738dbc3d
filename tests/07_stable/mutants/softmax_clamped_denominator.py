"""Clamps the denominator away from 0 "to avoid 0/0", so an all -inf slice gives 0 instead of nan; breaks "nan for a slice that is entirely -inf, as in torch.softmax"."""

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.shape[dim] == 0:
        return logits.clone()
    shift = logits.amax(dim=dim, keepdim=True).detach()
    shift = shift.masked_fill(shift.isinf(), 0)  # no inf - inf
    exp = torch.exp(logits - shift)
    return exp / exp.sum(dim=dim, keepdim=True).clamp_min(torch.finfo(logits.dtype).tiny)
