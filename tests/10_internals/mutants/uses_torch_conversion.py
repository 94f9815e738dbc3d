"""Lets torch convert (x.to(torch.bfloat16).float()): right bits, but the lesson's bit manipulation is skipped."""

EXPECT = r"round by hand"

import torch


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"expected float32, got {x.dtype}")
    return x.to(torch.bfloat16).float()
