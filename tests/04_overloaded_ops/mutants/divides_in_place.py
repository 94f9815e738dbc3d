"""Divides with the augmented `x /= norm`: the right values, but the caller's tensor is overwritten."""
EXPECT = r"x /= norm"

import torch


def normalize_rows(x, eps=1e-12):
    x /= torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(eps)
    return x
