"""Turns negative indices into positive ones in place: right values, but the caller's indices are changed."""

import torch


def batch_gather(tensor, indices):
    b, n = tensor.shape[:2]
    indices[indices < 0] += n
    offset = torch.arange(b, device=tensor.device).view(-1, *[1] * (indices.dim() - 1)) * n
    return tensor.reshape(b * n, *tensor.shape[2:])[indices + offset]
