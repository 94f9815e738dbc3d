"""Always loads with map_location="cpu", ignoring the argument; breaks "Loads with torch.load(path, map_location=map_location, weights_only=True)" / "`map_location` reaches `torch.load`"."""

EXPECT = r"map_location"

import torch


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _set_rng_states(checkpoint["rng"])
    return checkpoint["epoch"]
