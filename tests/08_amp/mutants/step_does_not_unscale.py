"""step() never unscales on its own: without an explicit unscale_ the optimizer sees gradients 65536 times too large."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def step(self, optimizer):
        state = self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "stepped": False, "found_inf": False})
        if not state["unscaled"]:  # only checks, never divides
            state["unscaled"] = True
            state["found_inf"] = not all(bool(p.grad.isfinite().all()) for p in self._grads(optimizer))
        return super().step(optimizer)

    @staticmethod
    def _grads(optimizer):
        return [p for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
