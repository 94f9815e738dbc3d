"""Subtracts the maximum in place: the right answer, but the caller's logits are changed."""

EXPECT = r"in-place"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    with torch.no_grad():
        logits.sub_(logits.amax(dim=dim, keepdim=True))
    exp = torch.exp(logits)
    return exp / exp.sum(dim=dim, keepdim=True)
