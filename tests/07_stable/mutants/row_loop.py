"""Normalises one row at a time in a Python loop: right values, many times slower."""

EXPECT = r"Python loop"

import torch


def stable_softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    moved = logits.movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = torch.empty_like(rows)
    for i in range(rows.shape[0]):
        row = rows[i]
        e = torch.exp(row - row.max())
        out[i] = e / e.sum()
    return out.reshape(moved.shape).movedim(-1, dim)
