"""Parameters are 0-d scalars torch.rand(()): breaks "`a` and `b`, each an nn.Parameter of shape (1,)" (and a 0-d x now gives a 0-d output)."""

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.rand(()))  # a scalar is a scalar
        self.b = nn.Parameter(torch.rand(()))

    def forward(self, x):
        return self.a * x + self.b
