"""fit clears the gradients between backward() and step(): every step updates with zero gradients, nothing trains."""

EXPECT = r"between backward\(\) and step\(\)"

import torch


def fit(model, x, y, steps, lr):
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = criterion(model(x), y)
        loss.backward()
        model.zero_grad()  # too late: step() below sees no gradient
        optimizer.step()
    return loss.item()
