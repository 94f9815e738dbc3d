"""Ignores growth_interval: the scale doubles after every clean step."""

EXPECT = r"growth_interval is not waited for"


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def update(self):
        scale = self._scale
        had_inf = any(s["found_inf"] for s in self._per_optimizer.values())
        super().update()
        if not had_inf and self._scale == scale:
            self._scale *= self._growth_factor
