"""Expands a and b to the common leading shape before projecting: same values, but Linear copies the expanded b, breaking "never allocates anything the size of the tiled input"."""
EXPECT = r"tiled copy the lesson warns of"

import torch
from torch import nn


class Merge(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features, bias=False)
        self.activation = activation

    def forward(self, a, b):
        lead = torch.broadcast_shapes(a.shape[:-1], b.shape[:-1])
        a = a.expand(*lead, a.shape[-1])  # "expand is free, it's a view"...
        b = b.expand(*lead, b.shape[-1])  # ...but linear2 has to make it contiguous
        c = self.linear1(a) + self.linear2(b)
        return c if self.activation is None else self.activation(c)

