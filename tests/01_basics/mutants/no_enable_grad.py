"""Forgets torch.enable_grad(): called inside torch.no_grad(), nothing is recorded and autograd.grad fails."""

EXPECT = r"torch\.enable_grad\(\)"

import torch


def derivative(fn, x):
    leaf = x.detach().requires_grad_()
    out = fn(leaf.clone())
    return torch.autograd.grad(out, leaf)[0]
