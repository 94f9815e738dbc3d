"""torch.gather with the index expanded over D, but torch.gather refuses negative indices (no wrap-around)."""

EXPECT = r"torch.gather does not wrap negative indices"

import torch


def batch_gather(tensor, indices):
    b, n, *d = tensor.shape
    index = indices.reshape(b, -1, *[1] * len(d)).expand(-1, -1, *d)  # (B, K, *D)
    out = torch.gather(tensor, 1, index)
    return out.reshape(*indices.shape, *d)
