"""Gathers in NumPy: right values for float32, but autograd is cut off and bfloat16 cannot become a NumPy array."""

import numpy as np
import torch


def batch_gather(tensor, indices):
    rows = np.arange(tensor.shape[0]).reshape(-1, *[1] * (indices.dim() - 1))
    return torch.from_numpy(tensor.detach().cpu().numpy()[rows, indices.cpu().numpy()]).to(tensor.device)
