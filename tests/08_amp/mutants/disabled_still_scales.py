"""enabled=False is ignored by scale(): the loss is still multiplied by 65536."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def scale(self, loss):
        return loss * self._scale
