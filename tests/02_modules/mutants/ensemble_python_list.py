"""Ensemble keeps its members in a plain Python list (the classic): parameters(), state_dict(), .to() and .eval() miss them all."""

EXPECT = r"plain-list pitfall"

import torch
from torch import nn


class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = list(members)
        if not self.members:
            raise ValueError("Ensemble needs at least one member")

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).mean(dim=0)
