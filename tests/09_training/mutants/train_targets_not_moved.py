"""train_epoch moves the inputs to `device` but not the targets: on a GPU the loss raises (targets on the CPU)."""

EXPECT = r"Move both tensors"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total_loss, total_samples = 0.0, 0
    for inputs, targets in loader:
        inputs = inputs.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * targets.shape[0]
        total_samples += targets.shape[0]
    return total_loss / total_samples
