"""Drops the low 16 bits without rounding (truncation toward zero): 1 + 2**-7 - 2**-20 becomes 1.0."""

EXPECT = r"truncates \(rounds toward zero\)"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(x), (bits | 0x0040_0000), bits)
    return (bits & -0x1_0000).view(torch.float32)
