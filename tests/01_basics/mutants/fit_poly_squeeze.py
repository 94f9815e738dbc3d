"""Column-vector weights squeezed afterwards: breaks "Returns shape (degree + 1,)" for degree=0 (returns shape ()) and "no warnings" for N=1 (prediction () vs y (1,))."""

EXPECT = r"squeeze\(\) drops every dim of size 1"

import torch
import torch.nn.functional as F


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    x, y = x.detach(), y.detach()
    features = torch.vander(x, N=degree + 1)
    w = torch.zeros(degree + 1, 1, dtype=x.dtype, device=x.device, requires_grad=True)  # column vector
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss((features @ w).squeeze(), y)  # (N, 1) -> (N,)
        loss.backward()
        optimizer.step()
    return w.detach().squeeze()
