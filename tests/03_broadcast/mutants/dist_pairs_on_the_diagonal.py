"""Subtracts x - y directly: only pairs (i, i), and only when N == M, instead of an [N, M] table."""
EXPECT = r"pairs row i of x with row i of y"


def pairwise_sq_dist(x, y):
    return ((x - y) ** 2).sum(-1, keepdim=True).expand(x.shape[0], y.shape[0])
