"""Row numbers are always [B] or [B, 1] (written for [B] and [B, K] only): for indices [B, K1, K2] they line up with the wrong axes, breaking "indices [B] or [B, K...]" -> "[B, *indices.shape[1:], *D]" (error, or silently wrong values when K1 == B)."""

import torch

EXPECT = r"one axis per axis of indices"  # what a learner who made this mistake must read


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...] with "
            f"the same B; got {tuple(tensor.shape)} and {tuple(indices.shape)}"
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
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    if indices.dim() > 1:
        rows = rows.unsqueeze(1)
    return tensor[rows, indices]
