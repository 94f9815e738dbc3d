"""Returns the coefficients lowest power first (torch.vander(..., increasing=True)): 5x^2 + 3 comes back as [3, 0, 5]."""

EXPECT = r"lowest power first"

import torch
import torch.nn.functional as F


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    features = torch.vander(x.detach(), N=degree + 1, increasing=True)
    w = torch.zeros(degree + 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(features @ w, y).backward()
        optimizer.step()
    return w.detach()
