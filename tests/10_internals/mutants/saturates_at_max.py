"""Clamps finite values that round past the largest bfloat16 to that maximum instead of inf (a saturating cast, not IEEE)."""

EXPECT = r"rounds up to inf"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000) & -0x1_0000, bits)
    lowest_kept = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
    largest = 0x7F7F_0000  # the largest finite bfloat16, as float32 bits
    limit = torch.tensor(largest, dtype=torch.int32, device=x.device).view(torch.float32)
    return torch.where(torch.isinf(rounded) & torch.isfinite(x), rounded.sign() * limit, rounded)
