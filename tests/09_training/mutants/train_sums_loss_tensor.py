"""train_epoch sums `loss * batch_size` as a tensor and calls .item() once at the end: the sum's graph holds every step's."""

EXPECT = r"loss\.item\(\)"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total = total + loss * targets.shape[0]
        count += targets.shape[0]
    return (total / count).item()
