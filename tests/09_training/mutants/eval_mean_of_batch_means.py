"""evaluate averages the batch means: the smaller last batch weighs as much as a full one."""

EXPECT = r"mean of the batch means"

_reference = evaluate  # noqa: F821 (the reference's)


def evaluate(model, loader, loss_fn, device):
    means = []

    def recording_loss(outputs, targets):
        loss = loss_fn(outputs, targets)
        means.append(loss.item())
        return loss

    _, accuracy = _reference(model, loader, recording_loss, device)
    return sum(means) / len(means), accuracy
