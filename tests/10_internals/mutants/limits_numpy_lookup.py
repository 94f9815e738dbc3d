"""Looks the well-known formats up in numpy.finfo and computes only the others; breaks "computed, not looked up"."""

EXPECT = r"compute the limits from the bit widths"

import numpy as np

_reference = float_limits
_KNOWN = {(5, 10): np.float16, (8, 23): np.float32, (11, 52): np.float64}


def float_limits(exponent_bits, mantissa_bits):
    if (exponent_bits, mantissa_bits) in _KNOWN:
        info = np.finfo(_KNOWN[exponent_bits, mantissa_bits])
        return float(info.max), float(info.eps), float(info.smallest_normal)
    return _reference(exponent_bits, mantissa_bits)
