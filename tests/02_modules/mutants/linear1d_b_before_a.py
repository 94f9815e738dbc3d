"""Registers b before a: breaks "`named_parameters()` yields exactly ("a", a) and ("b", b), in that order" (and a/b draw swapped numbers from the seeded RNG)."""

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.b = nn.Parameter(torch.rand(1))  # bias first, slope second
        self.a = nn.Parameter(torch.rand(1))

    def forward(self, x):
        return self.a * x + self.b
