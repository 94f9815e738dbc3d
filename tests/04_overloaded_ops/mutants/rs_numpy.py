"""Sums through a NumPy round trip: no gradient, and no result on a GPU or meta tensor."""
import torch


def row_sum(x):
    return torch.from_numpy(x.detach().numpy().sum(0))
