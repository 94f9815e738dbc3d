"""Centers the points but forgets the final clamp, breaking "never negative" (rounding leaves tiny negative squares)."""
EXPECT = r"clamp the result at 0"

import torch


def pairwise_sq_dist(x, y):
    center = torch.cat([x, y]).mean(0) if x.shape[0] + y.shape[0] else 0
    x, y = x - center, y - center
    return x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)
