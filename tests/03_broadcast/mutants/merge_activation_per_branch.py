"""Applies the activation to each projection before adding, breaking "`activation` ... applied to the sum" (Linear(cat) then activation)."""
EXPECT = r"activation applied to each projection"

import torch
from torch import nn


class Merge(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features, bias=False)
        self.activation = activation

    def forward(self, a, b):
        p, q = self.linear1(a), self.linear2(b)
        if self.activation is not None:
            p, q = self.activation(p), self.activation(q)
        return p + q

