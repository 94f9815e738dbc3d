"""Averages member.forward(x) instead of member(x): breaks "Call the module, not .forward ... model.forward(x) skips all of them [hooks], silently" (members' hooks, e.g. pruning, never run)."""

EXPECT = r"\.forward pitfall"

from torch import nn
import torch


class Ensemble(nn.Module):
    def __init__(self, members) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        if len(self.members) == 0:
            raise ValueError("Ensemble needs at least one member module")

    def forward(self, x):
        return torch.stack([member.forward(x) for member in self.members]).mean(dim=0)
