"""Never calls scaler.update(): the scale never adapts and the next step() raises."""

import torch

_reference = train_step  # noqa: F821 (the reference's)


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs):
    update, scaler.update = scaler.update, lambda: None
    try:
        return _reference(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs)
    finally:
        scaler.update = update
