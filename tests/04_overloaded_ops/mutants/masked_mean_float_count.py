"""Converts the count with .float() before dividing, so float16/bfloat16 inputs give float32, breaking "in x's dtype" (the hint: ".float() ... would turn float16 results into float32")."""
EXPECT = r"\.float\(\)"

import torch


def masked_mean(x, mask, dim):
    total = torch.where(mask, x, 0).sum(dim)
    return total / mask.sum(dim).clamp_min(1).float()
