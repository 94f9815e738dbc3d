"""Takes the norm without keepdim: shape (N,) lines up with the last dim, so a square input is divided along the wrong axis."""
EXPECT = r"norm without keepdim"

import torch


def normalize_rows(x, eps=1e-12):
    return x / torch.linalg.vector_norm(x, dim=-1).clamp_min(eps)
