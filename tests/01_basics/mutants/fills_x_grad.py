"""Builds the features from x without detaching it: when x requires grad, every backward() reaches into the caller's graph (torch.vander's backward even fails there)."""

EXPECT = r"detach them"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(torch.vander(x, N=degree + 1) @ w, y)
        loss.backward()
        optimizer.step()
    return w.detach()
