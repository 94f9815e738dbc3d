"""Raises ValueError("shapes do not broadcast") without saying which shapes."""
EXPECT = r"in the message"

import itertools


def broadcast_shape(shape_a, shape_b):
    out = []
    for sa, sb in itertools.zip_longest(reversed(tuple(shape_a)), reversed(tuple(shape_b)), fillvalue=1):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError("shapes do not broadcast")
        out.append(sb if sa == 1 else sa)
    return tuple(reversed(out))
