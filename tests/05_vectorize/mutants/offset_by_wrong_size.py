"""Flat offset stepped by B (tensor.shape[0]) instead of N: right only when B == N."""

import torch

EXPECT = r"step pitfall"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    b = tensor.shape[0]
    flat = tensor.flatten(0, 1)
    steps = torch.arange(b, device=tensor.device) * b
    return flat[indices + steps.view(-1, *[1] * (indices.dim() - 1))]
