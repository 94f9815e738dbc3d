"""Adds 0x8000 before clearing the low half: exact ties always round away from zero, not to even."""

EXPECT = r"ties to even"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000) & -0x1_0000, bits)
    return ((bits + 0x8000) & -0x1_0000).view(torch.float32)
