"""Row numbers always of shape [B, 1]: right for [B, K] indices only ([B] gives [B, B, ...])."""

import torch


def batch_gather(tensor, indices):
    rows = torch.arange(tensor.shape[0], device=tensor.device)[:, None]
    return tensor[rows, indices]
