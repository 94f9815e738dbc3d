"""Treats labels as one-hot: picks log_probs at labels.argmax(dim) instead of weighting by the whole distribution; breaks "labels: probabilities (each slice along `dim` sums to 1)" / "-sum(labels * log_softmax(logits))"."""

EXPECT = r"argmax class alone"

import torch


def softmax_cross_entropy(labels: torch.Tensor, logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.shape[dim] == 0:
        return -(labels * logits).sum(dim=dim)
    labels, logits = torch.broadcast_tensors(labels, logits)
    shift = logits.amax(dim=dim, keepdim=True).detach()
    shifted = logits - shift.masked_fill(shift.isinf(), 0)
    log_probs = shifted - logsumexp(shifted, dim).unsqueeze(dim)
    target = labels.argmax(dim=dim, keepdim=True)  # the class index
    return -log_probs.gather(dim, target).squeeze(dim)
