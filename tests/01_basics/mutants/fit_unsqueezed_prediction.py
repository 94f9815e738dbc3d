"""Coefficients of shape (degree + 1,), made a column by unsqueeze(1) at each prediction: (N, 1) predictions against
(N,) targets broadcast to an (N, N) loss, with no warning to name it; every fit it fails must name the shape pitfall."""

EXPECT = r"(?s)^fit_polynomial\(x, y, 1\) for noise-free samples.*This is the shape pitfall"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    X = torch.stack([x**p for p in range(degree, -1, -1)], dim=1)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        pred = X @ w.unsqueeze(1)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        opt.step()
    return w.detach()
