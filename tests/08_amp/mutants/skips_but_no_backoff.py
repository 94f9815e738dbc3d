"""Skips the bad step but never lowers the scale: it overflows again on every step."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def update(self):
        scale = self._scale
        had_inf = any(s["found_inf"] for s in self._per_optimizer.values())
        super().update()
        if had_inf:
            self._scale = scale  # no backoff
