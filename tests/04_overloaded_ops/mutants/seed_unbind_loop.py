"""The seed's second row sum: unbind splits the rows in one op, but the loop still adds them one at a time."""
EXPECT = r"loop over the rows"

import torch


def row_sum(x):
    z = x.new_zeros(x.shape[1:])
    for row in torch.unbind(x):
        z += row
    return z
