"""Refuses only floating-point indices: a bool (or uint8) tensor slips through and PyTorch reads it as a mask."""

import torch

EXPECT = r"as a mask"  # what a learner who made this mistake must read

_reference = batch_gather  # noqa: F821 (the reference's, defined before this file runs)


def batch_gather(tensor, indices):
    if indices.is_floating_point():
        raise TypeError(f"batch_gather: indices must be integers, got {indices.dtype}")
    if indices.dtype in (torch.bool, torch.uint8, torch.int8, torch.int16):
        rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
        return tensor[rows, indices]
    return _reference(tensor, indices)
