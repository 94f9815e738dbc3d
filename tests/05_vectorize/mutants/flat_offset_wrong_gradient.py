"""Flat offsets built with unsqueeze, no checks, negative indices left as they are: on an expanded tensor (every row
alike) the values come out right and only the gradient lands in the previous row; that failure must name the pitfall too."""

import torch

EXPECT = r"That gradient is exactly the one you get from the flat offset i\*N\. This is the flat-offset pitfall"


def batch_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    b, n = tensor.shape[:2]
    starts = torch.arange(b, device=tensor.device) * n
    for _ in range(indices.dim() - 1):
        starts = starts.unsqueeze(-1)
    return tensor.reshape(b * n, *tensor.shape[2:])[starts + indices]
