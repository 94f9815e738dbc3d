"""Calls torch.special.softmax, an alias of the forbidden torch.softmax; breaks "the tests fail if the code calls torch.softmax ... (in any spelling)"."""

EXPECT = r"write yourself"

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.numel() == 0:
        return logits.clone()
    shift = logits.amax(dim=dim, keepdim=True).detach()
    return torch.special.softmax(logits - shift, dim)  # shifted first, so "stable"
