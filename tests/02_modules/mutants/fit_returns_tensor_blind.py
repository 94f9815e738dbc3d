"""Returns loss.detach() (a 0-d tensor) instead of loss.item(): breaks "Returns the last step's loss ... as a Python float" (compares equal to floats, but is a Tensor)."""

EXPECT = r"loss\.item\(\)"

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
    return loss.detach()  # no graph kept alive
