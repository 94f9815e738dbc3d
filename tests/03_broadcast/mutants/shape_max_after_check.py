"""Checks the pairs but keeps the larger size: (0,) with (1,) gives (1,), yet a 1 stretches to 0."""
EXPECT = r"larger size of each pair"

import itertools


def broadcast_shape(shape_a, shape_b):
    out = []
    for sa, sb in itertools.zip_longest(reversed(tuple(shape_a)), reversed(tuple(shape_b)), fillvalue=1):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(max(sa, sb))
    return tuple(reversed(out))
