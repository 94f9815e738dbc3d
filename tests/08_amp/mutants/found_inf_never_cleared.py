"""Keeps one inf flag for the whole run and never clears it: after the first overflow every step is skipped."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    _sticky_inf = False

    def unscale_(self, optimizer):
        super().unscale_(optimizer)
        state = self._per_optimizer[id(optimizer)]
        self._sticky_inf = state["found_inf"] = self._sticky_inf or state["found_inf"]
