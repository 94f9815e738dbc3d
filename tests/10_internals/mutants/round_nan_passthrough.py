"""Rounds the bits but passes NaNs through unchanged (torch.where(isnan, x, ...)), so a NaN keeps its low 16 bits; breaks "elements are bfloat16 values (their low 16 bits are 0)" / "NaN stays NaN with its low 16 bits clear"."""

EXPECT = r"low 16 bits of every output"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    bits = x.view(torch.int32)
    lowest_kept = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
    return torch.where(torch.isnan(x), x, rounded)
