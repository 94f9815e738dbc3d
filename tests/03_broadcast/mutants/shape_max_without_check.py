"""Takes the larger size of each pair without checking for a 1: accepts (3, 2) with (3, 4)."""

import itertools


def broadcast_shape(shape_a, shape_b):
    pairs = itertools.zip_longest(reversed(tuple(shape_a)), reversed(tuple(shape_b)), fillvalue=1)
    return tuple(reversed([max(sa, sb) for sa, sb in pairs]))
