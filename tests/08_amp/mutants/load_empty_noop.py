"""load_state_dict({}) silently keeps the current state instead of raising; breaks "RuntimeError for an empty dict (saved from a disabled scaler)" (torch.amp.GradScaler raises)."""

from typing import Any

import torch


class DynamicLossScaler(DynamicLossScaler):
    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled or not state_dict:  # nothing saved: nothing to restore
            return
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
