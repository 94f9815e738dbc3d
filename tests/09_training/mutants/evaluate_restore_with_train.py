"""Restores the mode with model.train(was_training), which overwrites a frozen submodule's own flag; breaks "Afterwards every submodule has the train/eval flag it had before"."""

EXPECT = r"one flag was put back for the whole model"


def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)
    finally:
        model.train(was_training)
