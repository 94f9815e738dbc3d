"""The textbook softmax: exp(x) / sum(exp(x)) overflows to nan past ~88.7."""

EXPECT = r"exp overflowing"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    exp = torch.exp(logits)
    return exp / exp.sum(dim=dim, keepdim=True)
