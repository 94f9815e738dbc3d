"""evaluate switches to eval mode and never switches back: the caller's next epoch trains without dropout."""


def evaluate(model, loader, loss_fn, device):
    model.eval()
    return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
