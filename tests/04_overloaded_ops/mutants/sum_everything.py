"""x.sum() with no dim: one number for the whole tensor instead of one per column."""


def row_sum(x):
    return x.sum()
