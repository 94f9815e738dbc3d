"""logsumexp shifts by an infinite maximum: a fully masked (all -inf) row gives nan, not -inf."""

EXPECT = r"inf - inf"

import torch


def logsumexp(x, dim=-1):
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True)
    return torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
