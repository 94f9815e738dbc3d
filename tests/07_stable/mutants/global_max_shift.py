"""Shifts by one maximum for the whole tensor (a max without a dim): rows far below it underflow to 0/0."""

EXPECT = r"one maximum for the whole tensor"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    exp = torch.exp(logits - logits.max())
    return exp / exp.sum(dim=dim, keepdim=True)


def logsumexp(x, dim=-1):
    if x.numel() == 0:
        return x.exp().sum(dim=dim).log()
    shift = x.max()
    return torch.exp(x - shift).sum(dim=dim).log() + shift
