"""Guards the empty case with logits.shape[dim] == 0: a 0-d tensor has no shape[dim] (IndexError), though dim 0 and -1 are valid for it."""

EXPECT = r"numel\(\) == 0"

import torch


def stable_softmax(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.shape[dim] == 0:
        return logits.clone()
    shift = logits.amax(dim=dim, keepdim=True).detach()
    exp = torch.exp(logits - shift)
    return exp / exp.sum(dim=dim, keepdim=True)
