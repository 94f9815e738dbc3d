"""Linear1D registers a and b as buffers: saved in the state_dict and moved by .to(), but not trainable parameters."""

EXPECT = r"registered as buffers"

import torch
from torch import nn


class Linear1D(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.rand(1))
        self.register_buffer("b", torch.rand(1))

    def forward(self, x):
        return self.a * x + self.b
