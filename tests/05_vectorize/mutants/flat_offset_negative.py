"""Flat-offset trick (reshape + i*N) after a correct range check: a negative index reads the previous row, breaking "a negative index counts from the end of its own row"."""

import torch

EXPECT = r"flat-offset pitfall"  # what a learner who made this mistake must read


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
    flat = tensor.reshape(b * n, *tensor.shape[2:])
    offset = torch.arange(b, device=tensor.device).view(-1, *[1] * (indices.dim() - 1)) * n
    return flat[indices + offset]
