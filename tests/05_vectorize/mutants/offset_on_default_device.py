"""Flat offset (negatives wrapped, range checked) made with torch.arange(B) on the default device: adding it to indices on another device (meta here, CUDA on a GPU) fails."""

import torch

EXPECT = r"device=tensor\.device"  # what a learner who made this mistake must read


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
            where = bad.nonzero()[0].tolist()
            raise IndexError(
                f"batch_gather: indices[{', '.join(map(str, where))}] holds {indices[tuple(where)].item()}, "
                f"out of range for dimension 1 of size {n} (row {where[0]})"
            )
    wrapped = torch.where(indices < 0, indices + n, indices)
    offset = torch.arange(tensor.shape[0]).view(-1, *[1] * (indices.dim() - 1)) * n  # no device=tensor.device
    return tensor.reshape(tensor.shape[0] * n, *tensor.shape[2:])[wrapped + offset]
