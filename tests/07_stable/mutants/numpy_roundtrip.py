"""Computes in NumPy: right values in float32, but autograd is cut off (and bfloat16 fails)."""

import numpy as np
import torch


def stable_softmax(logits, dim=-1):
    if logits.shape[dim] == 0:
        return logits.clone()
    a = logits.detach().cpu().numpy()
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=dim, keepdims=True))
