"""enabled=False still checks for inf and skips steps (torch's disabled scaler just steps)."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def __init__(self, *args, enabled=True, **kwargs):
        super().__init__(*args, enabled=True, **kwargs)
        self._really_enabled = enabled

    def scale(self, loss):
        return super().scale(loss) if self._really_enabled else loss

    def unscale_(self, optimizer):
        saved = self._scale
        if not self._really_enabled:
            self._scale = 1.0
        super().unscale_(optimizer)
        self._scale = saved

    def get_scale(self):
        return super().get_scale() if self._really_enabled else 1.0

    def state_dict(self):
        return super().state_dict() if self._really_enabled else {}
