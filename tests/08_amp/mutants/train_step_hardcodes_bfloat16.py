"""Ignores `dtype` and always autocasts to bfloat16."""

import torch

_reference = train_step  # noqa: F821 (the reference's)


def train_step(*args, dtype=None, **kwargs):
    return _reference(*args, dtype=torch.bfloat16, **kwargs)
