"""fit minimises the summed squared error, not its mean: the step size grows with the number of samples."""

EXPECT = r"not their mean \(F\.mse_loss\)"

import torch


def fit(model, x, y, steps, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).sum()
        loss.backward()
        optimizer.step()
    return loss.item()
