"""Scales the strides by the element size for 2-byte dtypes (byte strides, as NumPy counts them); breaks "any dtype": as_strided counts elements, not bytes."""

EXPECT = r"not bytes|in bytes"

_reference = sliding_windows


def sliding_windows(x, size, step):
    if x.element_size() == 1:
        return _reference(x, size, step)
    if x.dim() == 0:
        raise ValueError("0-d")
    if size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError("bad sizes")
    count = (x.shape[0] - size) // step + 1
    k = 2 if x.element_size() == 2 else 1
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along * k, *x.stride()[1:], along * k), x.storage_offset())
