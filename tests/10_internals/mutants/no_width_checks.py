"""Checks nothing: float_limits(1, 7) returns a 'smallest normal' of 2.0 (larger than max), float_limits(8.0, 7) works."""


def float_limits(exponent_bits, mantissa_bits):
    bias = 2 ** (exponent_bits - 1) - 1
    eps = 2.0**-mantissa_bits
    return (2.0 - eps) * 2.0**bias, eps, 2.0 ** (1 - bias)
