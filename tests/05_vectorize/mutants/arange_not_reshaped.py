"""Row numbers of shape [B], not [B, 1, ...]: they line up with the last dim of [B, K] indices (silently wrong when K == B)."""

EXPECT = r"line up with its LAST axes"

import torch

EXPECT = r"one axis per axis of indices"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    return tensor[torch.arange(tensor.shape[0], device=tensor.device), indices]
