"""Helpfully upcasts bfloat16 to float32 before .numpy(): breaks "bfloat16 has no NumPy dtype (TypeError)" and "no copy" (returns a copy instead of raising)."""

import torch


def to_numpy(t):
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.float()  # NumPy has no bfloat16
    return t.numpy()
