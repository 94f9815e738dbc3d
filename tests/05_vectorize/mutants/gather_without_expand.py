"""torch.gather along dim 1 with indices not expanded over D: only the first entry of each D slice comes back."""

import torch


def batch_gather(tensor, indices):
    b, n, *d = tensor.shape
    index = (indices % n).reshape(b, -1, *[1] * len(d))  # (B, K, 1, ...): should be expanded to D
    out = torch.gather(tensor, 1, index)
    return out.reshape(*indices.shape, *out.shape[2:])
