"""load_state_dict forgets _growth_tracker: a restored run grows its scale late."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def load_state_dict(self, state_dict):
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
