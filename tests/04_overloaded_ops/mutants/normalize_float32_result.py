"""Upcasts to float32 for a stable norm and forgets to cast back, breaking "in x's shape and dtype" for float16/bfloat16 (and loses float64 precision)."""
EXPECT = r"cast for accuracy that is never undone"

import torch


def normalize_rows(x, eps=1e-12):
    x = x.float()
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
