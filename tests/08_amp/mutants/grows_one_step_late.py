"""Off by one: grows after growth_interval + 1 clean steps (> instead of ==)."""


class DynamicLossScaler(DynamicLossScaler):  # noqa: F821 (the reference's)
    def update(self):
        self._growth_interval += 1
        super().update()
        self._growth_interval -= 1
