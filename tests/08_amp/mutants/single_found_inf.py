"""Keeps ONE found_inf flag for the whole scaler, overwritten by every unscale_: with two optimizers, an inf in the first is forgotten when the second is clean, so update() grows instead of backing off; breaks "Found inf/nan (for any optimizer this iteration): S *= backoff_factor" (torch backs off)."""

EXPECT = r"ANY optimizer"

from typing import Any

import torch


class DynamicLossScaler(DynamicLossScaler):
    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        if not self._enabled:
            return
        state = self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "stepped": False, "found_inf": False})
        if state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stepped"]:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = torch.tensor(1.0 / self._scale, dtype=torch.float32)
        found_inf = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        found_inf |= not bool(torch.isfinite(p.grad).all())
                        p.grad.mul_(inv_scale)
        state["found_inf"] = found_inf
        self._found_inf = found_inf  # what update() looks at
        state["unscaled"] = True

    def update(self) -> None:
        if not self._enabled:
            return
        if getattr(self, "_found_inf", False):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf = False
        self._per_optimizer = {}
