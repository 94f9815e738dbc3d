"""unscale_ assigns p.grad = p.grad / scale (a new tensor); breaks "Divide every .grad ... by S in place"."""

EXPECT = r"IN PLACE"

import torch
class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def unscale_(self, optimizer):
        if not self._enabled:
            return
        state = self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "stepped": False, "found_inf": False})
        if state["unscaled"]:
            raise RuntimeError("twice")
        if state["stepped"]:
            raise RuntimeError("after step")
        found = False
        for g in optimizer.param_groups:
            for p in g["params"]:
                if p.grad is None: continue
                found |= not bool(torch.isfinite(p.grad).all())
                p.grad = p.grad / self._scale
        state["found_inf"] = found
        state["unscaled"] = True
