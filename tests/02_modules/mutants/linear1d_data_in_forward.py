"""Linear1D's forward uses a.data and b.data: the output is cut off from autograd and nothing trains."""

EXPECT = r"\.data and \.item\(\) leave autograd"

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.rand(1))
        self.b = nn.Parameter(torch.rand(1))

    def forward(self, x):
        return self.a.data * x + self.b.data
