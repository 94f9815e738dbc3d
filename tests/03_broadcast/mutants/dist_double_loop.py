"""The definition as written: two Python loops over the points."""
EXPECT = r"Python loop"

import torch


def pairwise_sq_dist(x, y):
    out = x.new_zeros(x.shape[0], y.shape[0])
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            out[i, j] = ((x[i] - y[j]) ** 2).sum()
    return out
