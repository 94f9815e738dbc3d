"""Creates the start coefficients without device=x.device: breaks "in x's dtype and on x's device" (fails for a non-CPU x, e.g. on the meta device)."""

EXPECT = r"device=x\.device"

import torch
import torch.nn.functional as F


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    features = torch.vander(x, N=degree + 1)
    w = torch.zeros(degree + 1, dtype=x.dtype, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(features @ w, y)
        loss.backward()
        optimizer.step()
    return w.detach()
