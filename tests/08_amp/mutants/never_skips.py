"""Steps even when the gradients hold inf or nan: one overflow writes inf into the weights."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def step(self, optimizer):
        if not self._per_optimizer.get(id(optimizer), {}).get("unscaled"):
            self.unscale_(optimizer)
        state = self._per_optimizer[id(optimizer)]
        found, state["found_inf"] = state["found_inf"], False
        result = super().step(optimizer)
        state["found_inf"] = found  # update() still backs off
        return result
