"""Adds the projections into torch.zeros(shape) built on the default device and in the default dtype."""
EXPECT = r"default device"
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
        c = torch.zeros(torch.broadcast_shapes(p.shape, q.shape)) + p + q
        return c if self.activation is None else self.activation(c)
