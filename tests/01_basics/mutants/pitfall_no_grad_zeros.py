"""Handles an fn that ignores x, but forgets the caller's torch.no_grad(): nothing is recorded there, so every fn looks constant and the derivative comes back as zeros."""

EXPECT = r"torch\.enable_grad\(\)"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    out = fn(leaf.clone())
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar, but it returned shape {tuple(out.shape)}")
    if not out.requires_grad:
        return torch.zeros_like(x)
    return torch.autograd.grad(out, leaf, materialize_grads=True)[0]
