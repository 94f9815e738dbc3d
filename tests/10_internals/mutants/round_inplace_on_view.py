"""Does the arithmetic in place on x.view(torch.int32), which shares x's memory, so x itself is overwritten; breaks "it is not modified" / "x unchanged"."""

EXPECT = r"shares x's memory"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    nan = torch.isnan(x)
    bits = x.view(torch.int32)
    quiet_nan = (bits | 0x0040_0000) & -0x1_0000
    lowest_kept = (bits >> 16) & 1
    bits.add_(0x7FFF).add_(lowest_kept).bitwise_and_(-0x1_0000)
    bits.copy_(torch.where(nan, quiet_nan, bits))
    return bits.view(torch.float32)
