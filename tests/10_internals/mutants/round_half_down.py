"""Rounds up only when the low half is above 0x8000: exact ties always round toward zero, not to even."""

EXPECT = r"ties to even"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000) & -0x1_0000, bits)
    kept = bits & -0x1_0000
    return torch.where((bits & 0xFFFF) > 0x8000, kept + 0x1_0000, kept).view(torch.float32)
