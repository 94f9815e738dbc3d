"""Computes in float32 for safety and forgets to cast back: float16/bfloat16 in, float32 out."""

EXPECT = r"not cast back"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    x = logits.float()
    exp = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return exp / exp.sum(dim=dim, keepdim=True)
