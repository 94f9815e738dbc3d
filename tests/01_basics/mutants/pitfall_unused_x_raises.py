"""Differentiates without caring whether fn uses x: an fn that ignores its argument makes autograd raise instead of returning the zero derivative."""

EXPECT = r"zero everywhere"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        out = fn(leaf.clone())
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar, but it returned shape {tuple(out.shape)}")
    return torch.autograd.grad(out, leaf)[0]
