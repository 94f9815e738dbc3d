"""Uses mask.float() as weights: right values, but float16 and bfloat16 inputs come back as float32."""
EXPECT = r"\.float\(\)"

import torch


def masked_mean(x, mask, dim):
    weights = mask.float()
    return (torch.where(mask, x, 0) * weights).sum(dim) / weights.sum(dim).clamp_min(1)
