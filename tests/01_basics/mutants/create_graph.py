"""Passes create_graph=True: the returned gradient is still attached to a graph and requires grad."""

EXPECT = r"create_graph=True"

import torch


def derivative(fn, x):
    leaf = x.detach().requires_grad_()
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(fn(leaf.clone()), leaf, create_graph=True)
    return grad
