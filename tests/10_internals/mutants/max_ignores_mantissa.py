"""Takes max as 2**(bias+1), forgetting that the significand 1.11...1 stops short of 2: float16 would reach 65536, not 65504."""

EXPECT = r"2 - eps, not 2"

_reference = float_limits  # noqa: F821 (the solution's, kept before this file replaces it)


def float_limits(exponent_bits, mantissa_bits):
    _, eps, smallest_normal = _reference(exponent_bits, mantissa_bits)
    return 2.0 ** (2 ** (exponent_bits - 1)), eps, smallest_normal
