"""Reports the loss of the trained model, evaluated after the loop: breaks "Returns the last step's loss (computed before that step's update)" and "called as model(x), exactly once per step" (hooks fire steps + 1 times)."""

EXPECT = r"loss after the last update"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    if steps < 1:
        raise ValueError(f"fit needs steps >= 1, got steps={steps}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    with torch.no_grad():  # the final loss of the trained model
        return F.mse_loss(model(x), y).item()
