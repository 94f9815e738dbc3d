"""Marks unselected entries nan and takes nanmean: a row with no True is nan, and a selected nan is silently dropped."""

import torch


def masked_mean(x, mask, dim):
    return torch.where(mask, x, float("nan")).nanmean(dim)
