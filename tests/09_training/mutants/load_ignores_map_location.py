"""load_checkpoint drops its map_location: a checkpoint saved on a GPU fails to load on a CPU machine."""

EXPECT = r"map_location"

import torch


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821 (the reference's)
    return checkpoint["epoch"]
