"""Never checks the dtype: a float64 or float16 x is reinterpreted as int32 and comes back as garbage of another shape."""

EXPECT = r"float32"

import torch


def round_to_bfloat16(x):
    bits = x.view(torch.int32)
    bits = torch.where(torch.isnan(bits.view(torch.float32)), (bits | 0x0040_0000) & -0x1_0000, bits)
    lowest_kept = (bits >> 16) & 1
    return ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
