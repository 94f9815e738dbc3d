"""Rounds the magnitude and puts the sign back with where(x < 0, ...): -0.0 comes out as +0.0."""

EXPECT = r"[Zz]ero keeps its sign"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.abs().view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000) & -0x1_0000, bits)
    lowest_kept = (bits >> 16) & 1
    magnitude = ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
    return torch.where(x < 0, -magnitude, magnitude)
