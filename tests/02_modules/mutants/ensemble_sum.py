"""Ensemble returns the sum of the members' outputs, not their mean."""

EXPECT = r"not their mean"

import torch

_Reference = Ensemble  # noqa: F821 (the reference's class)


class Ensemble(_Reference):
    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).sum(dim=0)
