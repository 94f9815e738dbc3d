"""Rejects a window exactly as long as x (size >= len(x)); breaks "Raises ValueError if ... size > len(x)" (size == len(x) is one window)."""

_reference = sliding_windows


def sliding_windows(x, size, step):
    if x.dim() and size >= x.shape[0]:
        raise ValueError(f"sliding_windows: size={size} must be shorter than dim 0 of x")
    return _reference(x, size, step)
