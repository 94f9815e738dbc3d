"""Returns x itself for an empty or 0-d input instead of a new tensor; breaks "Returns a new float32 tensor"."""

import torch

_reference = round_to_bfloat16


def round_to_bfloat16(x):
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_bfloat16 expects a float32 tensor, got {x.dtype}")
    if x.numel() <= 1 and not x.isnan().any():
        if x.numel() == 0 or (x.view(torch.int32) & 0xFFFF == 0).all():
            return x
    return _reference(x)
