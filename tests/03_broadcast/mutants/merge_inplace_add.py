"""Accumulates with `c += linear2(b)`: fails when a is the stretched side, breaking "either side may be the one that is stretched"."""
EXPECT = r"in-place add"

import torch
from torch import nn


class Merge(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features, bias=False)
        self.activation = activation

    def forward(self, a, b):
        c = self.linear1(a)
        c += self.linear2(b)  # in-place: c's shape cannot grow to the broadcast shape
        return c if self.activation is None else self.activation(c)

