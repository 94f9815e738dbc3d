"""Checks nothing: a window longer than x silently gives zero windows (or reads outside x) instead of a ValueError."""


def sliding_windows(x, size, step):
    count = max((x.shape[0] - size) // step + 1, 0)
    along = x.stride(0)
    return x.as_strided((count, *x.shape[1:], size), (step * along, *x.stride()[1:], along), x.storage_offset())
