"""The learner's first try: every check right, then row numbers of shape [B] against indices [B, K]. Every test
that calls it must say which call failed and why (the broadcasting pitfall), never show a line of the tests."""

import torch

EXPECT = r"^batch_gather\(tensor, indices\) for tensor of shape \(4, 6, 3\), float32 and indices of shape \(4, 2\), int64, with negative indices raised IndexError\((?s:.)*one axis per axis of indices"


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    if tensor.dim() < 2 or indices.dim() < 1 or indices.shape[0] != tensor.shape[0]:
        raise ValueError(f"batch_gather: shapes {tuple(tensor.shape)} and {tuple(indices.shape)} do not fit")
    if indices.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"batch_gather: indices must be int64 or int32, got {indices.dtype}")
    n = tensor.shape[1]
    if not indices.is_meta:
        bad = (indices >= n) | (indices < -n)
        if bad.any():
            pos = bad.nonzero()[0].tolist()
            raise IndexError(f"batch_gather: indices[{', '.join(map(str, pos))}] holds {indices[tuple(pos)].item()}, "
                             f"out of range for dimension 1 of size {n} (row {pos[0]})")
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    return tensor[rows, indices]
