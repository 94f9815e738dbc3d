"""A cross entropy: torch.sum over every dim returns one number for a whole batch."""

EXPECT = r"sums over every dim"

import torch


def softmax_cross_entropy(labels, logits, dim=-1):
    shifted = logits - logits.max()
    log_probs = shifted - logsumexp(shifted, dim).unsqueeze(dim)  # noqa: F821 (the reference's)
    return -torch.sum(labels * log_probs)
