"""Shifts by ONE maximum of the whole tensor instead of the maximum along `dim`; breaks "Pick c = the largest logit *along the dim you normalise over*" / "entries ... sum to 1"."""

EXPECT = r"one maximum for the whole tensor"

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.numel() == 0:
        return logits.clone()
    shift = logits.max().detach()  # one scalar shift: every exponent is still <= 0
    exp = torch.exp(logits - shift)
    return exp / exp.sum(dim=dim, keepdim=True)
