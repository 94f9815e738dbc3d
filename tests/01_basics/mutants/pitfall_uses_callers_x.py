"""Uses the caller's x directly when it already requires grad, without a clone: an fn that writes into its argument writes into the caller's memory (and a leaf that requires grad refuses in-place ops)."""

EXPECT = r"caller's memory"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    inp = x if x.requires_grad else x.detach().requires_grad_()  # already tracked: use it as it is
    with torch.enable_grad():
        out = fn(inp)
    if out.numel() != 1:
        raise ValueError(f"fn must return a scalar (one element), but it returned shape {tuple(out.shape)}")
    (grad,) = torch.autograd.grad(out, inp)
    return grad
