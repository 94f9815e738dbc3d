"""fit never clears the gradients: each step adds the new gradient to all the old ones."""

EXPECT = r"accumulating-gradient pitfall"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()
