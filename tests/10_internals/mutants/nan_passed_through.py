"""Returns NaN inputs unchanged: a float32 NaN with low-half payload is not a bfloat16 value (storing its top half gives inf)."""

EXPECT = r"low 16 bits of every output"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    lowest_kept = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
    return torch.where(torch.isnan(x), x, rounded)
