"""Writes a temporary file and renames it, but leaves the temporary file behind when saving fails."""

EXPECT = r"remove the temporary file"

import os

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    tmp = f"{os.fspath(path)}.tmp"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)
