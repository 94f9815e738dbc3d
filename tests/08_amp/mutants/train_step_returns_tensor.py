"""Returns the loss as a tensor instead of a Python float."""

EXPECT = r"Python float"

import torch

_reference = train_step  # noqa: F821 (the reference's)


def train_step(*args, **kwargs):
    return torch.tensor(_reference(*args, **kwargs))
