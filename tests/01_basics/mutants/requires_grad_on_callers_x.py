"""Switches gradients on with x.requires_grad_(): the caller's tensor comes back with its flag flipped."""

EXPECT = r"the caller's flag"

import torch


def derivative(fn, x):
    x.requires_grad_()
    (grad,) = torch.autograd.grad(fn(x.clone()), x)
    return grad
