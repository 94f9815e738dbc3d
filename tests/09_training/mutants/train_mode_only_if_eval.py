"""train_epoch calls model.train() only when model.training is False: a Dropout left in eval under a training model stays off."""

EXPECT = r"Call model\.train\(\) first"


def train_epoch(model, loader, optimizer, loss_fn, device):
    if not model.training:
        model.train()
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * targets.shape[0]
        total_samples += targets.shape[0]
    return total_loss / total_samples
