"""train_epoch averages the batch means: the smaller last batch weighs as much as a full one."""

EXPECT = r"mean of the batch means"

_reference = train_epoch  # noqa: F821 (the reference's)


def train_epoch(model, loader, optimizer, loss_fn, device):
    means = []

    def recording_loss(outputs, targets):
        loss = loss_fn(outputs, targets)
        means.append(loss.item())
        return loss

    _reference(model, loader, optimizer, recording_loss, device)
    return sum(means) / len(means)
