"""Unscales and checks only optimizer.param_groups[0]: the other groups step with scaled gradients."""

EXPECT = r"gradients of every param group"


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        rest = [p.grad for g in optimizer.param_groups[1:] for p in g["params"] if p.grad is not None]
        saved = [grad.clone() for grad in rest]
        super().unscale_(optimizer)
        for grad, old in zip(rest, saved):
            grad.copy_(old)
        self._per_optimizer[id(optimizer)]["found_inf"] = not all(
            bool(p.grad.isfinite().all()) for p in optimizer.param_groups[0]["params"] if p.grad is not None)
