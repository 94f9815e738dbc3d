"""Computes in float64 for accuracy and returns the float64 table, breaking "Returns out [N, M] in x's dtype"."""
EXPECT = r"x's dtype"

import torch


def pairwise_sq_dist(x, y):
    x, y = x.double(), y.double()
    center = torch.cat([x, y]).mean(0) if x.shape[0] + y.shape[0] else 0
    x, y = x - center, y - center
    sq = x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)
    return sq.clamp_min(0)
