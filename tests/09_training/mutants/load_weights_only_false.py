"""load_checkpoint unpickles with weights_only=False: a crafted checkpoint runs code when loaded."""

EXPECT = r"weights_only=True"

import torch


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location, weights_only=False)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821 (the reference's)
    return checkpoint["epoch"]
