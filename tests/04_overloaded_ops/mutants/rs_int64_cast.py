"""Casts every non-float input to int64 by hand, which drops the imaginary part of complex inputs."""
import torch


def row_sum(x):
    if x.is_floating_point():
        return torch.sum(x, dim=0)
    return torch.sum(x.to(torch.int64), dim=0)
