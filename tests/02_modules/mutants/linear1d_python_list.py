"""Linear1D keeps its two parameters in a Python list: the module does not register them."""

EXPECT = r"plain-list pitfall"

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.params = [nn.Parameter(torch.rand(1)), nn.Parameter(torch.rand(1))]  # [a, b]

    def forward(self, x):
        a, b = self.params
        return a * x + b
