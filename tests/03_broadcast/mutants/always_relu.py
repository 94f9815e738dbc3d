"""Ignores activation=None and always applies a ReLU."""

import torch


def _forward(self, a, b):
    c = self.linear1(a) + self.linear2(b)
    return torch.relu(c) if self.activation is None else self.activation(c)


Merge.forward = _forward  # noqa: F821
