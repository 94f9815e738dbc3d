"""Lets the all-ones exponent hold numbers (as float8_e4m3fn does): max is twice the IEEE one, where IEEE reserves it for inf/NaN."""

EXPECT = r"\(all ones\) holds inf and NaN"

_reference = float_limits  # noqa: F821 (the solution's, kept before this file replaces it)


def float_limits(exponent_bits, mantissa_bits):
    largest, eps, smallest_normal = _reference(exponent_bits, mantissa_bits)
    return largest * 2, eps, smallest_normal  # exponent field 2**e - 1 instead of 2**e - 2
