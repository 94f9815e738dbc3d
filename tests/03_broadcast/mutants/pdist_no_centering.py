"""Uses |x|^2 - 2x.y + |y|^2 without first moving the points near the origin, breaking "accurate for points far from the origin" (and 0 for a point against itself)."""
EXPECT = r"cancellation"

import torch


def pairwise_sq_dist(x, y):
    sq = x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)
    return sq.clamp_min(0)
