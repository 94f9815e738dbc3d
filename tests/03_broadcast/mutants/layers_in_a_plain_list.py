"""Keeps the two layers in a Python list: nn.Module does not see them (no parameters, no .to(), no training)."""
EXPECT = r"registered submodules"

from torch import nn


class Merge(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.layers = [nn.Linear(in_features1, out_features), nn.Linear(in_features2, out_features)]
        self.activation = activation

    @property
    def linear1(self):
        return self.layers[0]

    @property
    def linear2(self):
        return self.layers[1]

    def forward(self, a, b):
        c = self.linear1(a) + self.linear2(b)
        return c if self.activation is None else self.activation(c)
