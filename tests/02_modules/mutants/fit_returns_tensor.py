"""fit returns the loss tensor instead of a Python float (it keeps the graph, and GPU memory, alive)."""

EXPECT = r"loss\.item\(\)"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss
