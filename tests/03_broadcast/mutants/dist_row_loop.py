"""Vectorised within a row, but a Python loop over the rows of x."""
EXPECT = r"Python loop"

import torch


def pairwise_sq_dist(x, y):
    if x.shape[0] == 0:
        return x.new_zeros(0, y.shape[0])
    return torch.stack([((row - y) ** 2).sum(1) for row in x])
