"""Computes in float32 for accuracy and forgets to cast back: float16/bfloat16 in, float32 out; breaks "Returns x's shape without `dim`, in x's dtype" / "float16 and bfloat16 in, the same dtype out"."""

EXPECT = r"not cast back"

import torch


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x  # 16-bit sums lose digits
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True).detach()
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
