"""Rounds in place on x.view(torch.int32): right result, but the view shares x's memory, so the caller's x is rounded too."""

EXPECT = r"shares x's memory"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    nan = torch.isnan(x)
    bits = x.view(torch.int32)
    bits.copy_(torch.where(nan, (bits | 0x0040_0000) & -0x1_0000, bits))
    bits.add_(0x7FFF + ((bits >> 16) & 1)).bitwise_and_(-0x1_0000)
    return x
