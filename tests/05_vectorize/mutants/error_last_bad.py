"""Reports the LAST bad index (nonzero()[-1]) instead of the first: breaks "naming its position, value, N and row, for the first bad position in row-major order"."""

import torch

EXPECT = r"first in row-major order"  # what a learner who made this mistake must read


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
        where = bad.nonzero()[-1].tolist()
        raise IndexError(
            f"batch_gather: indices[{', '.join(map(str, where))}] holds {indices[tuple(where)].item()}, "
            f"out of range for dimension 1 of size {n} (row {where[0]})"
        )
    rows = torch.arange(tensor.shape[0], device=tensor.device).view(-1, *[1] * (indices.dim() - 1))
    return tensor[rows, indices]
