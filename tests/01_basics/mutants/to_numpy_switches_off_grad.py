"""Calls t.requires_grad_(False) so that .numpy() works: shares memory, but the caller's tensor stops tracking gradients."""

EXPECT = r"switched off the caller's t\.requires_grad"


def to_numpy(t):
    return t.requires_grad_(False).numpy()
