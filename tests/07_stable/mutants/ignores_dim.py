"""Always normalises over the last dim, whatever `dim` says."""

import torch


def stable_softmax(logits, dim=-1):
    if logits.shape[dim] == 0:
        return logits.clone()
    exp = torch.exp(logits - logits.amax(dim=-1, keepdim=True))
    return exp / exp.sum(dim=-1, keepdim=True)
