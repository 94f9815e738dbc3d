"""step() calls optimizer.step() but returns None always (SGD/Adam return None without a closure, so it looks right); breaks "step() returns what optimizer.step() returned (None on a skipped step)"."""

from typing import Any

import torch


class DynamicLossScaler(DynamicLossScaler):
    def step(self, optimizer: torch.optim.Optimizer) -> Any:
        if not self._enabled:
            optimizer.step()
            return None
        state = self._per_optimizer.get(id(optimizer))
        if state is not None and state["stepped"]:
            raise RuntimeError("step() has already been called since the last update().")
        if state is None or not state["unscaled"]:
            self.unscale_(optimizer)
            state = self._per_optimizer[id(optimizer)]
        if not state["found_inf"]:
            optimizer.step()
        state["stepped"] = True
