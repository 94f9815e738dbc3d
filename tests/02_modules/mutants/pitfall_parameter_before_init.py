"""Linear1D assigns its parameters before calling super().__init__(): nn.Module refuses ("cannot assign parameters before Module.__init__() call")."""

EXPECT = r"before Module\.__init__\(\) call"

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        self.a = nn.Parameter(torch.rand(1))
        self.b = nn.Parameter(torch.rand(1))
        super().__init__()

    def forward(self, x):
        return self.a * x + self.b
