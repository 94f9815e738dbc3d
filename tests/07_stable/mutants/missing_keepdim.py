"""Divides by exp.sum(dim) without keepdim: broadcasting lines the sums up with the wrong axis (silently wrong on square inputs)."""

EXPECT = r"keepdim=True"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    exp = torch.exp(logits - logits.amax(dim=dim, keepdim=True))
    return exp / exp.sum(dim=dim)
