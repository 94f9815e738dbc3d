"""Checks the range before the dtype: float indices holding 12.0 raise IndexError instead of the TypeError for their dtype."""

import torch

EXPECT = r"dtype is checked before the values"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...] with "
            f"the same B; got {tuple(tensor.shape)} and {tuple(indices.shape)}"
        )
    n = tensor.shape[1]
    if not indices.is_meta and not indices.is_complex():
        bad = (indices < -n) | (indices >= n)
        if bad.any():
            where = bad.nonzero()[0].tolist()
            raise IndexError(
                f"batch_gather: indices[{', '.join(map(str, where))}] holds {indices[tuple(where)].item()}, "
                f"out of range for dimension 1 of size {n} (row {where[0]})"
            )
    if indices.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"batch_gather: indices must be int64 or int32, got {indices.dtype}")
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]
