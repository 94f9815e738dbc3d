"""evaluate restores the modes after the loop, not in `finally`: an exception leaves the model in eval mode."""

EXPECT = r"finally"


def evaluate(model, loader, loss_fn, device):
    modes = {module: module.training for module in model.modules()}
    model.eval()
    result = _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821 (the reference's)
    for module, training in modes.items():
        module.training = training
    return result
