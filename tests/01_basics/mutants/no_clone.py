"""Hands fn the leaf itself, not a clone: an fn that writes into its argument fails (or would write into the caller's memory)."""

EXPECT = r"in-place pitfall: hand fn leaf\.clone\(\)"

import torch


def derivative(fn, x):
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        return torch.autograd.grad(fn(leaf), leaf)[0]
