"""evaluate switches to eval mode and never switches back: the caller's next epoch trains without dropout."""

EXPECT = r"left the model in eval mode"


def evaluate(model, loader, loss_fn, device):
    model.eval()
    return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
