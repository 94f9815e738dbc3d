"""Passes dtype=x.dtype to "keep the dtype", so int8/uint8/bool results stay narrow (and overflow), breaking "bool and integer inputs give int64"."""
EXPECT = r"sum kept in the input's dtype"

import torch


def row_sum(x):
    return torch.sum(x, dim=0, dtype=x.dtype)
