"""Coefficients kept as a column of shape (degree + 1, 1) with F.mse_loss: (N, 1) predictions against (N,) targets broadcast to an (N, N) loss (F.mse_loss warns)."""

EXPECT = r"shape pitfall: .*\(N, N\)"

import torch
import torch.nn.functional as F


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    features = torch.vander(x, N=degree + 1)
    w = torch.zeros(degree + 1, 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(features @ w, y)  # (N, 1) against (N,)
        loss.backward()
        optimizer.step()
    return w.detach().reshape(-1)
