"""evaluate restores with model.train(was_training): a BatchNorm frozen in eval comes back in train mode."""

EXPECT = r"one flag was put back for the whole model"


def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
    finally:
        model.train(was_training)
