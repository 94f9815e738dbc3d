"""Linear1D with plain tensors (requires_grad=True) instead of nn.Parameter: they get gradients, but parameters() never lists them."""

EXPECT = r"plain-tensor pitfall"

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.rand(1, requires_grad=True)
        self.b = torch.rand(1, requires_grad=True)

    def forward(self, x):
        return self.a * x + self.b
