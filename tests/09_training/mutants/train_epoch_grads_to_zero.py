"""Clears gradients with zero_grad(set_to_none=False): zeros instead of None, so unused parameters get stepped (weight decay / Adam); breaks "Before every step the gradients are cleared (set to None)"."""

EXPECT = r"set_to_none"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * targets.shape[0]
        total_samples += targets.shape[0]
    return total_loss / total_samples
