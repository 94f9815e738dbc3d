"""Lets PyTorch do the rounding (x.to(torch.bfloat16).float()) and only fixes NaNs on the bits; breaks "computed with integer ops on x.view(torch.int32), without creating any bfloat16 tensor"."""

EXPECT = r"round by hand"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    bits = x.view(torch.int32)
    quiet_nan = ((bits | 0x0040_0000) & -0x1_0000).view(torch.float32)
    return torch.where(torch.isnan(x), quiet_nan, x.to(torch.bfloat16).float())
