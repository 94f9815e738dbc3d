"""scale() multiplies by the Python float S: a float16 loss stays float16 (and 65536 * loss overflows to inf for loss >= 1) where torch's float32 0-dim tensor promotes to float32; breaks "S is applied as a float32 0-dim tensor ... so the result's dtype follows type promotion" / "behaves like torch.amp.GradScaler"."""

EXPECT = r"float32 0-dim tensor"

import torch


class DynamicLossScaler(DynamicLossScaler):
    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        if not self._enabled:
            return loss
        return loss * self._scale  # stays in the graph, keeps the loss's dtype
