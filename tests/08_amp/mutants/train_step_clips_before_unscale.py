"""Clips the scaled gradients, then steps: the threshold meets a norm 65536x too large."""

_reference = train_step  # noqa: F821 (the reference's)


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs):
    if kwargs.get("max_grad_norm") is None:
        return _reference(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs)
    # The reference's own unscale_ call (before the clip) does nothing, so the clip sees scaled
    # gradients; step() then unscales them, after the clip.
    def not_yet(optimizer):
        del scaler.unscale_  # back to the real method for step()

    scaler.unscale_ = not_yet
    try:
        return _reference(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs)
    finally:
        vars(scaler).pop("unscale_", None)
