"""Adds two empty tensors and reads the shape of the sum: broadcasting does the work, not the learner."""
EXPECT = r"not applying the rules|rules yourself"

import torch


def broadcast_shape(shape_a, shape_b):
    try:
        return tuple((torch.empty(tuple(shape_a)) + torch.empty(tuple(shape_b))).shape)
    except RuntimeError as exc:
        raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast") from exc
