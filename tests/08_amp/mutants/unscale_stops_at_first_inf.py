"""unscale_ stops at the first non-finite gradient (the step is skipped anyway), leaving the rest scaled; breaks "Divide every .grad of optimizer's parameters by S"."""

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
        inv = torch.tensor(1.0 / self._scale, dtype=torch.float32)
        found = False
        with torch.no_grad():
            for g in optimizer.param_groups:
                for p in g["params"]:
                    if p.grad is None: continue
                    if not torch.isfinite(p.grad).all():
                        found = True
                        break
                    p.grad.mul_(inv)
                if found: break
        state["found_inf"] = found
        state["unscaled"] = True
