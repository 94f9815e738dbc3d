"""The ValueError names only the clashing sizes, not the shapes, breaking "Raises ValueError, with both shapes in the message"."""
EXPECT = r"in the message"


def broadcast_shape(shape_a, shape_b):
    a, b = tuple(shape_a), tuple(shape_b)
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        size_a = a[-i] if i <= len(a) else 1
        size_b = b[-i] if i <= len(b) else 1
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(f"size {size_a} does not match size {size_b} at dim {-i}")
        out.append(size_b if size_a == 1 else size_a)
    return tuple(reversed(out))
