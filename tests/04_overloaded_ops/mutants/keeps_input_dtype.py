"""Sums in the input's dtype: a bool mask gives True/False instead of counts, int8 sums wrap around."""
EXPECT = r"sum kept in the input's dtype"


def row_sum(x):
    return x.sum(dim=0, dtype=x.dtype)
