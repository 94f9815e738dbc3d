"""On inf/nan it zeroes the bad gradients and still calls optimizer.step() ("a zero gradient changes nothing"): true for plain SGD, but Adam's step count and moments advance and its params move; breaks "the scaler SKIPS it (the parameters and the optimizer's state, e.g. Adam's moments and step count, stay as they were)" and "step() returns ... None on a skipped step"."""

EXPECT = r"does not call it at all"

from typing import Any

import torch


class DynamicLossScaler(DynamicLossScaler):
    def step(self, optimizer: torch.optim.Optimizer) -> Any:
        if not self._enabled:
            return optimizer.step()
        state = self._per_optimizer.get(id(optimizer))
        if state is not None and state["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if state is None or not state["unscaled"]:
            self.unscale_(optimizer)
            state = self._per_optimizer[id(optimizer)]
        if state["found_inf"]:
            with torch.no_grad():  # neutralise the bad step instead of special-casing it
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.grad.zero_()
        retval = optimizer.step()
        state["stepped"] = True
        return retval
