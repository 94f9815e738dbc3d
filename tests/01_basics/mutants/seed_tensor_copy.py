"""The classic recipe's w = torch.tensor(torch.randn(...), requires_grad=True): a copy of a tensor, and a UserWarning on every call."""

EXPECT = r"torch\.tensor\(tensor\) pitfall"

import torch
import torch.nn.functional as F


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    w = torch.tensor(torch.zeros([degree + 1, 1], dtype=x.dtype, device=x.device), requires_grad=True)
    opt = torch.optim.Adam([w], lr)
    f = torch.stack([x.detach() ** p for p in range(degree, -1, -1)], 1)
    for _ in range(steps):
        yhat = torch.squeeze(f @ w, 1)
        loss = F.mse_loss(yhat, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach().squeeze(1)
