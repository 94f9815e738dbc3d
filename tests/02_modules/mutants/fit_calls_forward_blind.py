"""Computes the prediction with model.forward(x): breaks "The module is called as model(x), exactly once per step, so its hooks run"."""

EXPECT = r"\.forward pitfall"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    if steps < 1:
        raise ValueError(f"fit needs steps >= 1, got steps={steps}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model.forward(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()
