"""zip() stops at the shorter shape, so the longer one's leading dims are lost: (5, 3) with (3,) gives (3,)."""
EXPECT = r"A missing dim counts as 1"


def broadcast_shape(shape_a, shape_b):
    out = []
    for sa, sb in zip(reversed(tuple(shape_a)), reversed(tuple(shape_b))):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(sb if sa == 1 else sa)
    return tuple(reversed(out))
