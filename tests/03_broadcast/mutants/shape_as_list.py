"""Returns a list, not a tuple: [3, 2] == (3, 2) is False in Python."""
EXPECT = r"a list for a tuple"

import itertools


def broadcast_shape(shape_a, shape_b):
    out = []
    for sa, sb in itertools.zip_longest(reversed(tuple(shape_a)), reversed(tuple(shape_b)), fillvalue=1):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(sb if sa == 1 else sa)
    return out[::-1]
