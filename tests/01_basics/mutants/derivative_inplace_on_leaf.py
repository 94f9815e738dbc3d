"""Hands fn the private leaf itself instead of a clone, having cloned x before requires_grad_() (still a leaf): breaks "fn ... may modify its argument in place" (an in-place fn now raises RuntimeError on a leaf that requires grad); the failure must say what to hand fn, a clone made after requires_grad_()."""

EXPECT = r"a tensor cloned before requires_grad_\(\) is a leaf too\)\. This is the in-place pitfall: hand fn leaf\.clone\(\)"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().clone().requires_grad_()  # private copy, so no need to clone again
    with torch.enable_grad():
        out = fn(leaf)
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar (one element), but it returned shape {tuple(out.shape)}")
    (grad,) = torch.autograd.grad(out, leaf)
    return grad
