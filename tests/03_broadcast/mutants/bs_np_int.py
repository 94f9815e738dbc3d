"""Returns tuple(np.array(sizes)): a tuple of NumPy ints, not of Python ints."""
import numpy as np


def broadcast_shape(shape_a, shape_b):
    a, b = tuple(shape_a), tuple(shape_b)
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for sa, sb in zip(a, b):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(sb if sa == 1 else sa)
    return tuple(np.array(out))
