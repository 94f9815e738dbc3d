"""Checks out.dim() != 0 instead of numel() != 1: breaks "returns a scalar tensor (one element)" (an fn returning shape (1,) or (1, 1) now raises ValueError)."""

EXPECT = r"numel\(\) == 1"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        out = fn(leaf.clone())
    if out.dim() != 0:
        raise ValueError(f"fn must return a scalar, but it returned shape {tuple(out.shape)}")
    (grad,) = torch.autograd.grad(out, leaf)
    return grad
