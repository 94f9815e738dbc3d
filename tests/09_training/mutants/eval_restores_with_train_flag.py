"""evaluate restores with model.train(was_training), in a `finally:` block: a BatchNorm frozen in eval comes back in
train mode, also when the loader raises, where the failure must name that one flag, not a missing `finally:`."""

EXPECT = r"^after the loader raised inside evaluate, .*one flag was put back for the whole model.*overwrites the BatchNorm1d '1', kept in eval mode"


def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
    finally:
        model.train(was_training)
