"""Fills a result made with torch.zeros, which is float32 by default: ints, bools, float16 and float64 come back as float32."""

import torch


def batch_gather(tensor, indices):
    out = torch.zeros(*indices.shape, *tensor.shape[2:], device=tensor.device)
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    out[...] = tensor[rows, indices]
    return out
