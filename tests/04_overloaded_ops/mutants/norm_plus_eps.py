"""Adds eps to the norm instead of clamping it: no nan, but every row of norm near or below eps comes out wrong."""
EXPECT = r"eps added to the norm"

import torch


def normalize_rows(x, eps=1e-12):
    return x / (torch.linalg.vector_norm(x, dim=-1, keepdim=True) + eps)
