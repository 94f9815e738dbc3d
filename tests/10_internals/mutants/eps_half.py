"""Returns 2**-(m+1), the unit roundoff (half an ulp at 1), as eps: torch.finfo's eps is the full gap from 1 to the next float."""

EXPECT = r"half of eps"

_reference = float_limits  # noqa: F821 (the solution's, kept before this file replaces it)


def float_limits(exponent_bits, mantissa_bits):
    largest, eps, smallest_normal = _reference(exponent_bits, mantissa_bits)
    return largest, eps / 2, smallest_normal
