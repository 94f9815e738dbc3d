"""unscale_ multiplies the gradients by S instead of by 1/S: updates 2**32 times too large."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        scale, self._scale = self._scale, 1.0 / self._scale
        super().unscale_(optimizer)  # multiplies by 1 / (1 / scale)
        self._scale = scale
