"""A train_epoch of its own that moves every batch but returns the mean of the batch means: the test of moving
batches must name that mean, not leave the learner looking at how batches are moved."""

EXPECT = r"with batches on another device returned .*mean of the batch means: batches of 16 and 24"


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, batches = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        batches += 1
    return total / batches
