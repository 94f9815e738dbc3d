"""load_checkpoint returns the saved epoch + 1 (the epoch to start next), not the number of epochs finished."""

EXPECT = r"not the next epoch to run"

_reference_load = load_checkpoint  # noqa: F821 (the reference's)


def load_checkpoint(path, model, optimizer, map_location="cpu"):
    return _reference_load(path, model, optimizer, map_location) + 1
