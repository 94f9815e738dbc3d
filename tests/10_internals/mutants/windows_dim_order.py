"""Puts the window dim right after the window index, (W, size, *rest), where unfold puts it last, (W, *rest, size)."""

EXPECT = r"the window's own dim goes last"


def sliding_windows(x, size, step):
    if x.dim() == 0 or size < 1 or step < 1 or size > x.shape[0]:
        raise ValueError(f"bad window: size={size}, step={step} for x of shape {tuple(x.shape)}")
    count = (x.shape[0] - size) // step + 1
    along = x.stride(0)
    return x.as_strided((count, size, *x.shape[1:]), (step * along, along, *x.stride()[1:]), x.storage_offset())
