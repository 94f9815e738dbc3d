"""Computes log_softmax as logits - logsumexp(logits) without shifting the logits first; cancellation loses digits for large equal logits; breaks "shift first: with x = [1e4, 1e4] ... keeps only three digits" (and "matches PyTorch's built-ins")."""

EXPECT = r"cancels the digits"

import torch


def softmax_cross_entropy(labels: torch.Tensor, logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if logits.numel() == 0:
        return -(labels * logits).sum(dim=dim)
    log_probs = logits - logsumexp(logits, dim).unsqueeze(dim)  # logsumexp is already stable
    return -(labels * log_probs).sum(dim=dim)
