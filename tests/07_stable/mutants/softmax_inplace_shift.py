"""Subtracts the maximum in place (`logits -= shift`) and so overwrites the caller's tensor; breaks "the input is not modified"."""

EXPECT = r"in-place"

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.numel() == 0:
        return logits.clone()
    shift = logits.amax(dim=dim, keepdim=True).detach()
    if logits.requires_grad:
        x = logits - shift
    else:
        x = logits
        x -= shift  # saves a copy of the logits
    exp = torch.exp(x)
    return exp / exp.sum(dim=dim, keepdim=True)
