"""evaluate records the flags of the model and its direct children only: a module two levels down stays in eval."""

EXPECT = r"children\(\) lists the first level only"


def evaluate(model, loader, loss_fn, device):
    modes = [(model, model.training)] + [(child, child.training) for child in model.children()]
    model.eval()
    try:
        return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821
    finally:
        for module, training in modes:
            module.training = training
