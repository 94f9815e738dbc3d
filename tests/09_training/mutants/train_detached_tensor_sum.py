"""train_epoch sums the detached losses as a tensor in the loss's dtype: in float16 the sum rounds."""

EXPECT = r"summed as a float16 tensor"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total = total + loss.detach() * targets.shape[0]
        count += targets.shape[0]
    return (total / count).item()
