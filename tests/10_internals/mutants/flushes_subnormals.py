"""Flushes subnormal inputs to (signed) zero, as some hardware conversions do: torch rounds them instead."""

EXPECT = r"subnormal \(exponent field 0\) rounds on its bits"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000) & -0x1_0000, bits)
    bits = torch.where((bits & 0x7F80_0000) == 0, bits & -0x8000_0000, bits)  # exponent 0: keep only the sign
    lowest_kept = (bits >> 16) & 1
    return ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
