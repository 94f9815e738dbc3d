"""Clamps at a hard-coded 1e-12 and ignores the `eps` it was given."""

EXPECT = r"not at the eps given"

import torch


def normalize_rows(x, eps=1e-12):
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(1e-12)
