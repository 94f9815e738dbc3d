"""train_epoch takes a batch's size from targets.shape[-1]: right for class indices, wrong for (batch, k) targets."""


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * targets.shape[-1]
        total_samples += targets.shape[-1]
    return total_loss / total_samples
