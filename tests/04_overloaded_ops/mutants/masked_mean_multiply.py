"""Masks by multiplying (x * mask), so an inf or nan in an unselected entry makes the result nan (inf * 0), breaking "Unselected entries affect neither the result nor its gradient, even when they hold inf or nan"."""
EXPECT = r"multiplying by the mask"

import torch


def masked_mean(x, mask, dim):
    total = (x * mask).sum(dim)
    return total / mask.sum(dim).clamp_min(1)
