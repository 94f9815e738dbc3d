"""ORs two empty NumPy bool arrays and reads the shape: NumPy broadcasting does the work, not the learner."""
EXPECT = r"rules yourself"
import numpy as np


def broadcast_shape(shape_a, shape_b):
    try:
        return tuple(int(s) for s in (np.empty(tuple(shape_a), dtype=np.bool_) | np.empty(tuple(shape_b), dtype=np.bool_)).shape)
    except ValueError as exc:
        raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast") from exc
