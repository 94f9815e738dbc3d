"""Rounds with float math (frexp, round the mantissa to 8 bits, ldexp): right for normals, wrong for subnormals."""

EXPECT = r"subnormal \(exponent field 0\) rounds on its bits"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    mantissa, exponent = torch.frexp(x)  # mantissa in [0.5, 1): 8 significant bits are 2**8 steps
    return torch.ldexp(torch.round(mantissa * 256) / 256, exponent)
