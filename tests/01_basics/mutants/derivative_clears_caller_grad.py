"""Uses backward() on x itself, then tidies up by restoring the flag and setting x.grad = None: breaks "x itself is left exactly as it was: values, requires_grad flag and .grad"."""

EXPECT = r"autograd\.grad"

import torch


def derivative(fn, x):
    if not x.is_floating_point():
        raise TypeError(f"derivative needs a floating-point x, got {x.dtype}")
    had_flag = x.requires_grad
    x.grad = None  # start from a clean gradient
    x.requires_grad_(True)
    with torch.enable_grad():
        out = fn(x.clone())
    if out.numel() != 1:
        x.requires_grad_(had_flag)
        raise ValueError(f"fn must return a scalar, got shape {tuple(out.shape)}")
    out.backward()
    grad = x.grad.detach().clone()
    x.grad = None  # leave no gradient behind
    x.requires_grad_(had_flag)
    return grad
