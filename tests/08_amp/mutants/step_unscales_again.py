"""step() always divides the gradients by the scale, even after an explicit unscale_: clipped updates shrink 65536x."""

import torch


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def step(self, optimizer):
        if self._per_optimizer.get(id(optimizer), {}).get("unscaled"):
            with torch.no_grad():
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.grad /= self._scale
        return super().step(optimizer)
