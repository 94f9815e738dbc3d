"""Quietly sums a non-scalar result: returns the gradient of fn(x).sum() instead of reporting fn's mistake."""

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"gradients need floating point, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        total = fn(leaf.clone()).sum()
    return torch.autograd.grad(total, leaf)[0]
