"""Uses out.backward() on a private leaf instead of torch.autograd.grad: breaks "computed with torch.autograd.grad" / grad() "stores nothing anywhere" (closed-over tensors that require grad get a .grad)."""

EXPECT = r"autograd\.grad"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        out = fn(leaf.clone())
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar (one element), but it returned shape {tuple(out.shape)}")
    out.backward()  # the leaf is private, so its .grad is ours
    return leaf.grad
