"""torch.cdist(x, y) ** 2: past 25 points cdist uses the same matmul expansion, uncentered."""

import torch


def pairwise_sq_dist(x, y):
    return torch.cdist(x, y) ** 2
