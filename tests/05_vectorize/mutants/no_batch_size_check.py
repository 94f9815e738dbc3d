"""Checks only the number of dims, not that both first dims agree: indices of batch size 1 broadcast over every row, breaking "shapes that do not fit ([B, N, ...] and [B, ...] with the same B) raise ValueError"."""

import torch

EXPECT = r"batch size 1 broadcast"  # what a learner who made this mistake must read


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if tensor.dim() < 2 or indices.dim() < 1:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...]; "
            f"got {tuple(tensor.shape)} and {tuple(indices.shape)}"
        )
    if indices.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"batch_gather: indices must be int64 or int32, got {indices.dtype}")
    n = tensor.shape[1]
    bad = (indices < -n) | (indices >= n)
    if bad.any():
        where = bad.nonzero()[0].tolist()
        raise IndexError(
            f"batch_gather: indices[{', '.join(map(str, where))}] holds {indices[tuple(where)].item()}, "
            f"out of range for dimension 1 of size {n} (row {where[0]})"
        )
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]
