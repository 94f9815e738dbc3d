"""Clamps the norm with torch.maximum against an eps tensor built on the default device."""
EXPECT = r"default device"
import torch


def normalize_rows(x, eps=1e-12):
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    return x / torch.maximum(norm, torch.full((1,), eps, dtype=x.dtype))
