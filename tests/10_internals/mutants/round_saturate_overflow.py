"""Treats a carry into the all-ones exponent as a bug and truncates instead, so finite values near float32 max stay finite; breaks "a finite value too large for bfloat16 becomes inf"."""

EXPECT = r"rounds up to inf"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    bits = x.view(torch.int32)
    quiet_nan = (bits | 0x0040_0000) & -0x1_0000
    bits = torch.where(torch.isnan(x), quiet_nan, bits)
    lowest_kept = (bits >> 16) & 1
    rounded = (bits + 0x7FFF + lowest_kept) & -0x1_0000
    # do not let rounding turn a finite number into inf: keep the truncated value then
    overflowed = torch.isfinite(x) & ((rounded & 0x7F80_0000) == 0x7F80_0000)
    rounded = torch.where(overflowed, bits & -0x1_0000, rounded)
    return rounded.view(torch.float32)
