"""Returns the smallest subnormal, 2**(1-bias-m), where the smallest normal number, 2**(1-bias), is asked for."""

EXPECT = r"That is the smallest subnormal"

_reference = float_limits  # noqa: F821 (the solution's, kept before this file replaces it)


def float_limits(exponent_bits, mantissa_bits):
    largest, eps, smallest_normal = _reference(exponent_bits, mantissa_bits)
    return largest, eps, smallest_normal * eps  # one unit of the last mantissa bit at the lowest exponent
