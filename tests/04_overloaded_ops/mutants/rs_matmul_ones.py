"""Sums floats as ones @ x, with the ones built on the default device."""
EXPECT = r"default device"
import torch


def row_sum(x):
    if not x.is_floating_point():
        return torch.sum(x, dim=0)
    return torch.tensordot(torch.ones(x.shape[0], dtype=x.dtype), x, dims=1)
