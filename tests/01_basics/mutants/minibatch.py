"""Fits on a random batch of 16 samples per step (the classic recipe drew fresh samples each step): not the full-batch mean squared error."""

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    features = torch.vander(x.detach(), N=degree + 1)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        batch = torch.randint(len(x), (16,), device=x.device)
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(features[batch] @ w, y[batch]).backward()
        optimizer.step()
    return w.detach()
