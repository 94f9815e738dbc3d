"""Flat offset with negative indices wrapped by + N, but the range check only looks at >= N: -N-1 silently reads the previous row."""

import torch


def batch_gather(tensor, indices):
    b, n = tensor.shape[:2]
    if (indices >= n).any():
        row = int((indices >= n).reshape(b, -1).any(1).nonzero()[0])
        raise IndexError(f"batch_gather: indices[{row}] holds a value >= {n}, out of range (row {row})")
    wrapped = torch.where(indices < 0, indices + n, indices)
    offset = torch.arange(b, device=tensor.device).reshape(-1, *[1] * (indices.dim() - 1)) * n
    return tensor.reshape(b * n, *tensor.shape[2:])[wrapped + offset]
