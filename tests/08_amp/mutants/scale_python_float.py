"""scale() multiplies by the Python float S: a float16 loss stays float16 (and 65536 * loss overflows to inf for loss >= 1) where torch's float32 0-dim tensor promotes to float32; breaks "scale(loss) matches torch's: value, dtype, device and graph"."""

EXPECT = r"float32 0-dim tensor"

import torch


class DynamicLossScaler(DynamicLossScaler):
    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        if not self._enabled:
            return loss
        return loss * self._scale  # stays in the graph, keeps the loss's dtype
