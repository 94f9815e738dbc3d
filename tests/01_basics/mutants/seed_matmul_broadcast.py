"""The classic recipe's w of shape (3, 1) without its squeeze: (N, 1) predictions against (N,) targets broadcast to an (N, N) loss."""

EXPECT = r"shape pitfall: .*\(N, N\)"

import torch


def fit_polynomial(x, y, degree, steps=1000, lr=0.1):
    powers = torch.stack([x.detach() ** p for p in range(degree, -1, -1)], dim=1)
    w = torch.zeros(degree + 1, 1, dtype=x.dtype, device=x.device, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr)
    for _ in range(steps):
        loss = ((powers @ w - y) ** 2).mean()  # (N, 1) - (N,) -> (N, N)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach().squeeze(1)
