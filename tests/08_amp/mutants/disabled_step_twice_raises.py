"""A disabled scaler still refuses a second step() before update(); breaks "enabled=False turns every method into a pass-through" (step just steps)."""

class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def step(self, optimizer):
        if not self._enabled:
            if getattr(self, "_stepped_disabled", False):
                raise RuntimeError("step() has already been called since the last update().")
            self._stepped_disabled = True
            return optimizer.step()
        return super().step(optimizer)
    def update(self):
        self._stepped_disabled = False
        super().update()
