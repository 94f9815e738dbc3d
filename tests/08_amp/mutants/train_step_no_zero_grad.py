"""Never zeroes the gradients: each step adds to the last one's."""

EXPECT = r"never cleared"

import torch

_reference = train_step  # noqa: F821 (the reference's)


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs):
    optimizer.zero_grad = lambda set_to_none=True: None
    return _reference(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs)
