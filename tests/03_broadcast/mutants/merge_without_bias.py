"""Builds both layers with bias=False: Linear(cat(a, b)) has a bias, and this Merge has none."""
EXPECT = r"has no bias"
from torch import nn


class Merge(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features, bias=False)
        self.linear2 = nn.Linear(in_features2, out_features, bias=False)
        self.activation = activation

    def forward(self, a, b):
        c = self.linear1(a) + self.linear2(b)
        return c if self.activation is None else self.activation(c)
