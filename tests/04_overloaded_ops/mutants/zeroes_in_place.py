"""Zeroes the unselected entries with `x[~mask] = 0`: the right mean, but it writes into the caller's x."""
EXPECT = r"x\[~mask\] = 0"


def masked_mean(x, mask, dim):
    x[~mask] = 0
    return x.sum(dim) / mask.sum(dim).clamp_min(1)
