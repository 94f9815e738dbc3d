"""Broadcasts right but sums over the points instead of the coordinates: [N, D], not [N, M]."""
EXPECT = r"sum over the wrong dim"


def pairwise_sq_dist(x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(1)
