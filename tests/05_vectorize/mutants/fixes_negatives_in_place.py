"""Turns negative indices into positive ones in place: right values, but the caller's indices are changed."""

import torch

EXPECT = r"in place"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    b, n = tensor.shape[:2]
    indices[indices < 0] += n
    offset = torch.arange(b, device=tensor.device).view(-1, *[1] * (indices.dim() - 1)) * n
    return tensor.reshape(b * n, *tensor.shape[2:])[indices + offset]
