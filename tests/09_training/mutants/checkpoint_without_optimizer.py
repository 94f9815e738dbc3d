"""Saves and restores the model only: Adam restarts with empty moments and step counts."""

EXPECT = r"optimizer"

import torch


def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "epoch": epoch, "rng": _rng_states()}, path)  # noqa: F821


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821 (the reference's)
    return checkpoint["epoch"]
