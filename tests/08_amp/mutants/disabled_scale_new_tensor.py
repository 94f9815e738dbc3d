"""When disabled, scale() returns loss * 1.0 (a new tensor with the same value) instead of the loss itself; breaks "enabled=False: scale returns the loss itself" (torch returns the very same object)."""

EXPECT = r"returns the loss itself"

import torch


class DynamicLossScaler(DynamicLossScaler):
    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        s = self._scale if self._enabled else 1.0  # a disabled scaler scales by 1
        return loss * torch.tensor(s, dtype=torch.float32, device=loss.device)
