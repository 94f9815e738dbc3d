"""logsumexp subtracts the maximum taken without keepdim: on a (B, C) input x - max lines the B maxima up with the C columns (a size error, or silently wrong when B == C)."""

EXPECT = r"keepdim=True"

import torch


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim).detach()  # one maximum per slice, already the result's shape
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift
