"""Loops over the coordinates (one op per dim of D) and builds its zeros on the default device."""
EXPECT = r"Python loop"
import torch


def pairwise_sq_dist(x, y):
    out = torch.zeros(x.shape[0], y.shape[0], dtype=x.dtype)
    for k in range(x.shape[1]):
        out = out + (x[:, k, None] - y[None, :, k]) ** 2
    return out
