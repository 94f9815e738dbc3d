"""Handles negative indices with indices % N, which also wraps an out-of-range 12 to 12 % N instead of raising."""

import torch

EXPECT = r"% N` pitfall"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices % tensor.shape[1]]
