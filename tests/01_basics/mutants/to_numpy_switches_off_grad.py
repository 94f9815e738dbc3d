"""Calls t.requires_grad_(False) so that .numpy() works: shares memory, but the caller's tensor stops tracking gradients."""


def to_numpy(t):
    return t.requires_grad_(False).numpy()
