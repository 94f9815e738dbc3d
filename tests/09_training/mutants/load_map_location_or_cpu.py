"""load_checkpoint passes `map_location or "cpu"`: map_location=None (keep each tensor where it was saved) becomes "cpu"."""

EXPECT = r"map_location"

import torch


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location or "cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])  # noqa: F821
    return checkpoint["epoch"]
