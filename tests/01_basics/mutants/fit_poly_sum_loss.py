"""Hand-written sum of squared errors instead of the mean: breaks "Minimises the mean squared error ... follows Adam on the full batch step by step" (Adam's eps makes the steps differ when gradients are small)."""

EXPECT = r"sum of the squared errors, not the mean"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    features = torch.vander(x, N=degree + 1)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((features @ w - y) ** 2).sum()  # Adam is scale invariant anyway
        loss.backward()
        optimizer.step()
    return w.detach()
