"""logsumexp adds back the maximum with its kept dim: (B,) + (B, 1) broadcasts to a (B, B) table."""

EXPECT = r"squeeze\(dim\)"

import torch


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True).detach()
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift
