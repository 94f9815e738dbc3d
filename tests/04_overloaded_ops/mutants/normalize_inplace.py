"""Divides in place with `/=` to save memory, changing the caller's tensor, breaking "x is not modified"."""
EXPECT = r"x /= norm"

import torch


def normalize_rows(x, eps=1e-12):
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    x /= norm.clamp_min(eps)
    return x
