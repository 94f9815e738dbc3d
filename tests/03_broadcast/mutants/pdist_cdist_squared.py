"""Squares torch.cdist, whose default mode uses the matmul expansion for >25 rows without centering, breaking "accurate for points far from the origin, including a point against itself (0)"."""
EXPECT = r"cancellation"

import torch


def pairwise_sq_dist(x, y):
    return torch.cdist(x, y).pow(2)
