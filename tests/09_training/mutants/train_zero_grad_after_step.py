"""train_epoch clears the gradients after each step only: stale gradients it found leak into the first step."""

EXPECT = r"after each step only"

_reference = train_epoch  # noqa: F821 (the reference's)


class _ZeroGradAfterStep:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def zero_grad(self, set_to_none=True):
        pass  # not before backward...

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()  # ...only after the step


def train_epoch(model, loader, optimizer, loss_fn, device):
    return _reference(model, loader, _ZeroGradAfterStep(optimizer), loss_fn, device)
