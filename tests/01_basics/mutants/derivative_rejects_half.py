"""Whitelists float32/float64 as "floating point": breaks "x: floating-point tensor of any shape" (float16 and bfloat16 raise TypeError)."""

import torch


def derivative(fn, x):
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        out = fn(leaf.clone())
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar (one element), but it returned shape {tuple(out.shape)}")
    (grad,) = torch.autograd.grad(out, leaf)
    return grad
