"""No guard in unscale_: a second call divides the gradients by the scale again, silently."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        self._per_optimizer.pop(id(optimizer), None)  # forget the first call
        super().unscale_(optimizer)
