"""evaluate never calls model.eval(): dropout stays on and BatchNorm uses (and updates) batch statistics."""

EXPECT = r"model\.eval\(\)"


def evaluate(model, loader, loss_fn, device):
    return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
