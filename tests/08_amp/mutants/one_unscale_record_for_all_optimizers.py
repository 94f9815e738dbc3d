"""One "unscaled" record for the whole scaler: unscale_(a) then unscale_(b) raises; breaks "RuntimeError when called twice for the SAME optimizer" (torch keeps a record per optimizer)."""

EXPECT = r"per optimizer"

class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        key = id(optimizer)
        if self._enabled and self._per_optimizer and key not in self._per_optimizer and any(s["unscaled"] for s in self._per_optimizer.values()):
            raise RuntimeError("unscale_() has already been called since the last update().")
        super().unscale_(optimizer)
