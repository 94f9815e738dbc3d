"""MLP keeps its layers in a plain Python list: no parameters, empty state_dict, invisible to an optimizer."""

EXPECT = r"plain-list pitfall"

from torch import nn

_Reference = MLP  # noqa: F821 (the reference's class, in whose module this file runs)


class MLP(nn.Module):
    def __init__(self, sizes, activation=nn.ReLU):
        super().__init__()
        self.layers = list(_Reference(sizes, activation))  # the right layers, in a plain list

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
