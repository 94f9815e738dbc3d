"""Detects overflow with torch.isinf(grad).any(), which is False for nan: a nan gradient is stepped into the params and the scale grows; breaks "with inf or nan injected into a gradient on some steps (those steps change nothing but the scale)"."""

EXPECT = r"misses nan"

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
                    if p.grad is None:
                        continue
                    found_inf |= bool(torch.isinf(p.grad).any())  # overflow means inf
                    p.grad.mul_(inv_scale)
        state["found_inf"] = found_inf
        state["unscaled"] = True
