"""Asks torch.broadcast_shapes instead of applying the rules."""
EXPECT = r"rules yourself"

import torch


def broadcast_shape(shape_a, shape_b):
    try:
        return tuple(torch.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except RuntimeError as exc:
        raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast") from exc
