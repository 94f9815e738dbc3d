"""Uses Python's built-in sum over the tensor: a hidden loop over rows (500 adds), and N = 0 returns the int 0, breaking "as one reduction (no loop, no indexing)" and "N = 0 gives zeros" of shape x.shape[1:]."""
EXPECT = r"built-in sum\(\)"

import torch


def row_sum(x):
    return sum(x)
