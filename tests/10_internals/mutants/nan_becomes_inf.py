"""Rounds NaNs like numbers: a NaN whose payload sits only in the low 16 bits comes out as inf."""

EXPECT = r"handle NaNs apart"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    bits = x.view(torch.int32)
    lowest_kept = (bits >> 16) & 1
    return ((bits + 0x7FFF + lowest_kept) & -0x1_0000).view(torch.float32)
