"""Rounds the magnitude and re-applies the sign with torch.where(x < 0, -r, r), which turns -0.0 into +0.0; breaks "+-0.0 and +-inf keep their sign"."""

EXPECT = r"[Zz]ero keeps its sign"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    bits = x.view(torch.int32) & 0x7FFF_FFFF  # magnitude
    quiet_nan = (bits | 0x0040_0000) & -0x1_0000
    bits = torch.where(torch.isnan(x), quiet_nan, bits)
    lowest_kept = (bits >> 16) & 1
    magnitude = ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
    return torch.where(x < 0, -magnitude, magnitude)
