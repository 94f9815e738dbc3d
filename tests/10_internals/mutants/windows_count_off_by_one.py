"""Counts (len - size) // step windows, forgetting the first one: size == len(x) gives no window at all."""

EXPECT = r"windows, not W ="


def sliding_windows(x, size, step):
    if x.dim() == 0 or size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError(f"bad window: size={size}, step={step} for x of shape {tuple(x.shape)}")
    count = (x.shape[0] - size) // step
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along, *x.stride()[1:], along), x.storage_offset())
