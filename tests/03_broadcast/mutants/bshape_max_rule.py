"""Takes max(size_a, size_b) for compatible sizes, so 1 against 0 gives 1, breaking "a 1 takes the other size (even 0)" / agreement with torch.broadcast_shapes."""
EXPECT = r"larger size of each pair"


def broadcast_shape(shape_a, shape_b):
    a, b = tuple(shape_a), tuple(shape_b)
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for sa, sb in zip(a, b):
        if sa != sb and sa != 1 and sb != 1:
            raise ValueError(f"shapes {tuple(shape_a)} and {tuple(shape_b)} do not broadcast")
        out.append(max(sa, sb))
    return tuple(out)
