"""Checks emptiness with `if not members` before wrapping: breaks "any iterable of members ... at least one, else ValueError" (an empty generator is truthy, so no error)."""

from torch import nn
import torch


class Ensemble(nn.Module):
    def __init__(self, members) -> None:
        super().__init__()
        if not members:
            raise ValueError("Ensemble needs at least one member module")
        self.members = nn.ModuleList(members)

    def forward(self, x):
        return torch.stack([member(x) for member in self.members]).mean(dim=0)
