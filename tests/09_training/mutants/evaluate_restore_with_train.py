"""Restores the mode with model.train(was_training), which overwrites a frozen submodule's own flag; breaks "Afterwards every submodule has the train/eval flag it had before"; the failure names the submodule it overwrote (a Dropout here, not always a BatchNorm)."""

EXPECT = r"in eval mode with its Dropout in train: .*one flag was put back for the whole model.*overwrites the Dropout '3', kept in train mode"


def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)
    finally:
        model.train(was_training)
