"""Passes storage_offset=0 to as_strided: a slice such as x[3:] gets windows from the start of the storage."""

EXPECT = r"storage_offset passed to as_strided is absolute"


def sliding_windows(x, size, step):
    if x.dim() == 0 or size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError(f"bad window: size={size}, step={step} for x of shape {tuple(x.shape)}")
    count = (x.shape[0] - size) // step + 1
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along, *x.stride()[1:], along), 0)
