"""Computes half-precision inputs in float32 and returns float32, not x's dtype."""
EXPECT = r"x's dtype"
import torch


def pairwise_sq_dist(x, y):
    if x.dtype in (torch.float16, torch.bfloat16):
        x, y = x.float(), y.float()
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
