"""Row numbers of shape [B], not [B, 1, ...]: they line up with the last dim of [B, K] indices (silently wrong when K == B)."""

import torch


def batch_gather(tensor, indices):
    return tensor[torch.arange(tensor.shape[0], device=tensor.device), indices]
