"""fit calls model.forward(x) instead of model(x): the module's hooks never run."""

EXPECT = r"\.forward pitfall"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model.forward(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()
