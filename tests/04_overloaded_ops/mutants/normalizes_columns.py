"""Takes the norm over dim 0: normalises the columns instead of the rows."""

import torch


def normalize_rows(x, eps=1e-12):
    return x / torch.linalg.vector_norm(x, dim=0, keepdim=True).clamp_min(eps)
