"""fit builds the optimizer over the first parameter only: the rest (Linear1D's b, an MLP's later layers) never move."""

EXPECT = r"all of model\.parameters\(\)"

import torch
import torch.nn.functional as F


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.SGD(list(model.parameters())[:1], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()
