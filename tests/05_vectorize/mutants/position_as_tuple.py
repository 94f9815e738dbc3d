"""Names the bad position as a tuple, "index (3, 1)", not as the docstring's "indices[3, 1]"."""

EXPECT = r"name the position as indices\["

import torch


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
        bad = (indices < -n) | (indices >= n)
        if bad.any():
            where = tuple(bad.nonzero()[0].tolist())
            raise IndexError(
                f"batch_gather: index {where} holds {indices[where].item()}, "
                f"out of range for dimension 1 of size {n} (row {where[0]})"
            )
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]
