"""Compares sizes with `is not`: equal sizes above 256 are different int objects, so they are refused."""
EXPECT = r"sizes with `is`"


def broadcast_shape(shape_a, shape_b):
    a, b = tuple(shape_a), tuple(shape_b)
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        size_a = a[-i] if i <= len(a) else 1
        size_b = b[-i] if i <= len(b) else 1
        if size_a is not size_b and 1 not in (size_a, size_b):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        out.append(size_b if size_a == 1 else size_a)
    return tuple(reversed(out))
