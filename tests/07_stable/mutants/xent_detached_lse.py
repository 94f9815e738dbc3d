"""Detaches the whole logsumexp (not just the max shift) as "a constant": forward is right, the gradient w.r.t. logits is -labels instead of softmax - labels; breaks "The tests check gradients as well" / matching F.cross_entropy's gradient."""

EXPECT = r"log-sum-exp term is detached"

import torch


def softmax_cross_entropy(labels: torch.Tensor, logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.numel() == 0:
        return -(labels * logits).sum(dim=dim)
    shift = logits.amax(dim=dim, keepdim=True).detach()
    shifted = logits - shift.masked_fill(shift.isinf(), 0)
    norm = logsumexp(shifted, dim).unsqueeze(dim).detach()  # the normaliser is a constant per row
    return -(labels * (shifted - norm)).sum(dim=dim)
