"""pick_device returns "cuda" / "cpu" strings, not torch.device objects."""

_reference = pick_device  # noqa: F821 (the reference's)


def pick_device(prefer=None):
    return str(_reference(prefer))
