"""The classic nn.Linear(1, 1) version: parameters named linear.weight/linear.bias, and unsqueeze(1) breaks x with more than one dim."""

from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)

    @property
    def a(self):
        return self.linear.weight

    @property
    def b(self):
        return self.linear.bias

    def forward(self, x):
        return self.linear(x.unsqueeze(1)).squeeze(1)
