"""train_epoch returns the mean loss as a tensor (as summing loss tensors instead of loss.item() does), not a float."""

EXPECT = r"Python float"

import torch

_reference = train_epoch  # noqa: F821 (the reference's)


def train_epoch(model, loader, optimizer, loss_fn, device):
    return torch.tensor(_reference(model, loader, optimizer, loss_fn, device))
