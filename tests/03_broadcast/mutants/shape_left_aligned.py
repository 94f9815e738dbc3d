"""Lines the shapes up from the LEFT: (2, 1) with (2,) gives (2, 1) instead of (2, 2)."""
EXPECT = r"from the LEFT"


def broadcast_shape(shape_a, shape_b):
    a, b = list(shape_a), list(shape_b)
    n = max(len(a), len(b))
    a, b = a + [1] * (n - len(a)), b + [1] * (n - len(b))
    out = []
    for sa, sb in zip(a, b):
        if sa != sb and 1 not in (sa, sb):
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(sb if sa == 1 else sa)
    return tuple(out)
