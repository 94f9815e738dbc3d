"""Divides by norm + eps instead of max(norm, eps), breaking "Returns x / max(norm, eps) ... Equals torch.nn.functional.normalize" for rows whose norm is near eps."""
EXPECT = r"eps added to the norm"

import torch


def normalize_rows(x, eps=1e-12):
    return x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + eps)
