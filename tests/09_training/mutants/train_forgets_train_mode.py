"""train_epoch never calls model.train(): after evaluate, the model trains without dropout."""

EXPECT = r"Call model\.train\(\) first"

_reference = train_epoch  # noqa: F821 (the reference's)


def train_epoch(model, loader, optimizer, loss_fn, device):
    model.train = lambda mode=True: model  # the reference's model.train() now does nothing
    try:
        return _reference(model, loader, optimizer, loss_fn, device)
    finally:
        del model.train
