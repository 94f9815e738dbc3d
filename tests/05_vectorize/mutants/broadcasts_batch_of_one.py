"""No shape check: indices of batch size 1 broadcast over every row instead of being refused."""

import torch

EXPECT = r"batch size 1 broadcast"  # what a learner who made this mistake must read

_reference = batch_gather  # noqa: F821 (the reference's, defined before this file runs)


def batch_gather(tensor, indices):
    if indices.dim() >= 1 and indices.shape[0] == 1 and tensor.dim() >= 2:
        indices = indices.expand(tensor.shape[0], *indices.shape[1:])  # what PyTorch's broadcasting does
    return _reference(tensor, indices)
