"""Looks for inf with isinf only: a nan gradient (nan != inf) is stepped into the weights."""

EXPECT = r"misses nan"


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        super().unscale_(optimizer)
        self._per_optimizer[id(optimizer)]["found_inf"] = any(
            bool(p.grad.isinf().any()) for g in optimizer.param_groups for p in g["params"] if p.grad is not None)
