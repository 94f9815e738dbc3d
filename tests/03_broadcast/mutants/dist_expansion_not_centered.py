"""Clamps at 0 but does not center: points near 1e4 lose every digit of their distances."""
EXPECT = r"cancellation"


def pairwise_sq_dist(x, y):
    return (x.pow(2).sum(1, keepdim=True) - 2 * (x @ y.T) + y.pow(2).sum(1)).clamp_min(0)
