"""Takes the norm as sqrt of the sum of squares: nan gradient for a zero row and float16 overflow above 256, breaking "with finite gradients" and equality with F.normalize in float16."""
EXPECT = r"square root of a sum of squares"

import torch


def normalize_rows(x, eps=1e-12):
    norm = (x * x).sum(-1, keepdim=True).sqrt()
    return x / norm.clamp_min(eps)
