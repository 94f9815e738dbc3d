"""Checks the range in Python over indices.tolist(): no tensor op per row, but a Python loop over every index (about 40x slower than the gather at 262144 indices)."""

import torch

EXPECT = r"Python loop over the index values"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...] with "
            f"the same B; got {tuple(tensor.shape)} and {tuple(indices.shape)}"
        )
    if indices.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"batch_gather: indices must be int64 or int32, got {indices.dtype}")
    n = tensor.shape[1]
    if not indices.is_meta:
        for k, value in enumerate(indices.reshape(-1).tolist()):
            if not -n <= value < n:
                where, rest = [], k
                for size in reversed(indices.shape):
                    where.insert(0, rest % size)
                    rest //= size
                raise IndexError(
                    f"batch_gather: indices[{', '.join(map(str, where))}] holds {value}, "
                    f"out of range for dimension 1 of size {n} (row {where[0]})"
                )
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]
