"""Flattens the first two dims with .view, which cannot merge them on a transposed or sliced tensor."""

import torch

EXPECT = r"\.view pitfall"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    b, n = tensor.shape[:2]
    flat = tensor.view(b * n, *tensor.shape[2:])
    rows = torch.arange(b, device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return flat[rows * n + indices % n]
