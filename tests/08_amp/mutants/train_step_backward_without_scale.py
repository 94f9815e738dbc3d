"""Calls loss.backward() without scaler.scale: step() then divides unscaled gradients by 65536."""

EXPECT = r"scaler\.scale\(loss\)"

import torch

_reference = train_step  # noqa: F821 (the reference's)


class _NoScale:
    def __init__(self, scaler):
        self.scaler = scaler

    def __getattr__(self, name):
        return getattr(self.scaler, name)

    def scale(self, loss):
        self.scaler.scale(loss)  # sets torch's scale up, result dropped
        return loss


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs):
    return _reference(model, optimizer, _NoScale(scaler), inputs, targets, loss_fn, **kwargs)
