"""logsumexp that subtracts the maximum but never adds it back: off by max(x)."""

EXPECT = r"not added back"

import torch


def logsumexp(x, dim=-1):
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True)
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log()
