"""Clears gradients after each step instead of before, so stale .grad found on entry enters the first step; breaks "gradients cleared before every step (even stale ones it found)"."""

EXPECT = r"after each step only"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        total_loss += loss.item() * targets.shape[0]
        total_samples += targets.shape[0]
    return total_loss / total_samples
