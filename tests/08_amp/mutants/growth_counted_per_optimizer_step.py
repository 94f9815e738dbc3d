"""Counts a clean step in step() instead of update(): with two optimizers the scale grows twice as fast; breaks "counts one more clean step" per update()."""

EXPECT = r"ONE clean step per update\(\)"

class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def step(self, optimizer):
        r = super().step(optimizer)
        if self._enabled and not self._per_optimizer[id(optimizer)]["found_inf"]:
            self._growth_tracker += 1
        return r
    def update(self):
        if not self._enabled:
            return
        if any(s["found_inf"] for s in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._growth_tracker >= self._growth_interval:
            self._scale *= self._growth_factor
            self._growth_tracker = 0
        self._per_optimizer = {}
