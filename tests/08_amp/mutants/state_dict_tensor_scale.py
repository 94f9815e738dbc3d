"""state_dict() hands out the scale as a float32 0-dim tensor and the counter as an int32 tensor (as torch keeps them internally); `==` against torch's dict still holds, but the values are not Python numbers; breaks "state_dict() ... with Python numbers, as torch's" / "state_dict() has torch's keys and values"."""

from typing import Any

import torch


class DynamicLossScaler(DynamicLossScaler):
    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {
            "scale": torch.tensor(self._scale, dtype=torch.float32),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": torch.tensor(self._growth_tracker, dtype=torch.int32),
        }
