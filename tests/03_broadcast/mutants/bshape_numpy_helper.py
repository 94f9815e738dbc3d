"""Delegates to numpy.broadcast_shapes (raises ValueError naming both shapes), breaking "Written from the rules by hand: no tensors and no library broadcasting helpers"."""
EXPECT = r"rules yourself"

import numpy as np


def broadcast_shape(shape_a, shape_b):
    return tuple(int(s) for s in np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
