"""Forgets optimizer.zero_grad(): backward() adds every step's gradient to the last, and Adam follows their running sum."""

EXPECT = r"accumulating-gradient pitfall"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    features = torch.vander(x.detach(), N=degree + 1)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        ((features @ w - y) ** 2).mean().backward()
        optimizer.step()
    return w.detach()
