"""Uses bias = 2**(e-1) instead of 2**(e-1) - 1: max and smallest normal are off by a factor of 2."""

EXPECT = r"bias one too large"


def float_limits(exponent_bits, mantissa_bits):
    if not isinstance(exponent_bits, int) or not isinstance(mantissa_bits, int):
        raise TypeError("the widths must be ints")
    if not (2 <= exponent_bits <= 11 and 1 <= mantissa_bits <= 52):
        raise ValueError("widths out of range")
    bias = 2 ** (exponent_bits - 1)
    eps = 2.0**-mantissa_bits
    return (2.0 - eps) * 2.0 ** (bias - 1), eps, 2.0 ** (1 - bias)
