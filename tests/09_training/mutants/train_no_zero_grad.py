"""train_epoch never clears the gradients: each step applies the sum of all gradients so far."""

EXPECT = r"never clears the gradients"

_reference = train_epoch  # noqa: F821 (the reference's)


class _WithoutZeroGrad:
    def __init__(self, optimizer):
        self.step = optimizer.step

    def zero_grad(self, set_to_none=True):
        pass


def train_epoch(model, loader, optimizer, loss_fn, device):
    return _reference(model, loader, _WithoutZeroGrad(optimizer), loss_fn, device)
