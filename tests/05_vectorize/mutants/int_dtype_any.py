"""Only rejects floating/complex indices: bool and uint8 indices are accepted (and read as masks), breaking "indices of another dtype (float, bool, uint8, ...) raise TypeError"."""

import torch

EXPECT = r"as a mask"  # what a learner who made this mistake must read


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(
            "batch_gather: expected tensor of shape [B, N, ...] and indices of shape [B, ...] with "
            f"the same B; got {tuple(tensor.shape)} and {tuple(indices.shape)}"
        )
    if indices.is_floating_point() or indices.is_complex():
        raise TypeError(f"batch_gather: indices must be integers, got {indices.dtype}")
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
