"""The checkpoint holds the model's parameters only (named_parameters), loaded with strict=False: BatchNorm's running statistics are lost."""

EXPECT = r"buffers"

import os

import torch


def save_checkpoint(path, model, optimizer, epoch):
    checkpoint = {"model": {n: p.detach() for n, p in model.named_parameters()}, "optimizer": optimizer.state_dict(),
                  "epoch": epoch, "rng": _rng_states()}  # noqa: F821
    tmp = os.fspath(path) + ".tmp"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821
    return checkpoint["epoch"]
