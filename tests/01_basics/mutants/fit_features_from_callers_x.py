"""Builds the features once from the caller's x, before the loop and without detaching it: when x requires grad,
the second backward() runs through the freed graph of those features. The failure must show the learner's line and
say what to detach."""

EXPECT = r"a second time.*\n.*: in fit_polynomial\n    loss\.backward\(\)\n.*detach them first"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    X = torch.stack([x**p for p in range(degree, -1, -1)], dim=1)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((X @ w - y) ** 2).mean()
        loss.backward()
        opt.step()
    return w.detach()
