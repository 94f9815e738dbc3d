"""Flat-offset gather with .view(B * N, ...) (negatives fixed with torch.where): raises RuntimeError on a non-contiguous tensor, breaking "tensor: ... any strides" / "non-contiguous tensors and indices work"."""

import torch

EXPECT = r"\.view pitfall"  # what a learner who made this mistake must read


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...] with "
            f"the same B; got {tuple(tensor.shape)} and {tuple(indices.shape)}"
        )
    if indices.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"batch_gather: indices must be int64 or int32, got {indices.dtype}")
    b, n = tensor.shape[0], tensor.shape[1]
    bad = (indices < -n) | (indices >= n)
    if bad.any():
        where = bad.nonzero()[0].tolist()
        raise IndexError(
            f"batch_gather: indices[{', '.join(map(str, where))}] holds {indices[tuple(where)].item()}, "
            f"out of range for dimension 1 of size {n} (row {where[0]})"
        )
    idx = torch.where(indices < 0, indices + n, indices)
    flat = tensor.view(b * n, *tensor.shape[2:])
    offset = torch.arange(b, device=tensor.device).view(-1, *[1] * (indices.dim() - 1)) * n
    return flat[idx + offset]
