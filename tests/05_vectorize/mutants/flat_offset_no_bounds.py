"""The seed's flat-offset trick on the input's device, unchecked: index -1 reads the previous row and an index >= N the next one, silently."""

import torch

EXPECT = r"flat-offset pitfall"  # what a learner who made this mistake must read


def batch_gather(tensor, indices):
    b, n = tensor.shape[:2]
    flat = tensor.reshape(b * n, *tensor.shape[2:])  # (B*N, *D)
    offset = torch.arange(b, device=tensor.device).reshape(-1, *[1] * (indices.dim() - 1)) * n
    return flat[indices + offset]
