"""No special case for an empty `dim`: amax raises on a zero-size reduction; breaks "an empty slice gives -inf" / "an empty dim to reduce over: ... logsumexp returns -inf"."""

EXPECT = r"has no maximum"

import torch


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shift = x.amax(dim=dim, keepdim=True).detach()
    shift = shift.masked_fill(shift.isinf(), 0)
    return torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
