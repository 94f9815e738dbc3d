"""Patches the inf - inf nan afterwards with nan_to_num(nan=-inf): an all -inf slice is right but a slice holding +inf gives -inf; breaks "one holding +inf gives +inf"."""

import torch


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.shape[dim] == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.amax(dim=dim, keepdim=True).detach()
    out = torch.exp(x - shift).sum(dim=dim).log() + shift.squeeze(dim)
    # an all -inf row gives (-inf) - (-inf) = nan: that is the log of an empty sum, -inf
    return torch.nan_to_num(out, nan=float("-inf"), posinf=float("inf"), neginf=float("-inf"))
