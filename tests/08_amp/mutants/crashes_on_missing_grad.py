"""Forgets that a parameter may have no gradient: p.grad is None crashes unscale_."""

EXPECT = r"grad is None"


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.grad.isfinite()  # AttributeError on None
        super().unscale_(optimizer)
