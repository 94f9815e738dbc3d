"""Backs off on inf but keeps counting clean steps from before it: grows too early."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def update(self):
        tracker = self._growth_tracker
        had_inf = any(s["found_inf"] for s in self._per_optimizer.values())
        super().update()
        if had_inf:
            self._growth_tracker = tracker
