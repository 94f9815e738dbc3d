"""load_checkpoint loads the model with strict=False: a checkpoint of another model half-loads without a word."""

EXPECT = r"strict"

import torch


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821
    return checkpoint["epoch"]
