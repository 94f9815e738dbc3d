"""Computes the largest finite value with integer arithmetic, so it is a Python int (equal in value); breaks "the results are Python floats"."""

EXPECT = r"plain Python floats"


def float_limits(exponent_bits, mantissa_bits):
    for name, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"float_limits: {name} must be an int, got {value!r}")
    if not 2 <= exponent_bits <= 11:
        raise ValueError(f"float_limits: exponent_bits must be 2 to 11, got {exponent_bits}")
    if not 1 <= mantissa_bits <= 52:
        raise ValueError(f"float_limits: mantissa_bits must be 1 to 52, got {mantissa_bits}")
    bias = 2 ** (exponent_bits - 1) - 1
    eps = 2.0 ** -mantissa_bits
    # all mantissa bits set, as an integer significand, times 2**(bias - m)
    significand = 2 ** (mantissa_bits + 1) - 1
    shift = bias - mantissa_bits
    largest = significand << shift if shift >= 0 else significand / 2 ** -shift
    smallest_normal = 2.0 ** (1 - bias)
    return largest, eps, smallest_normal
