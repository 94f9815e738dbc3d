"""Uses torch.functional.broadcast_shapes, an alias of the forbidden helper under another module."""
EXPECT = r"rules yourself"
import torch.functional


def broadcast_shape(shape_a, shape_b):
    try:
        return tuple(torch.functional.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except RuntimeError as exc:
        raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast") from exc
