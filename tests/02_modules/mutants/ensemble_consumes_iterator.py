"""Ensemble reads `members` twice (to check it is not empty, then to register it): a generator is used up, so it keeps no member."""

EXPECT = r"generator was read twice"

from torch import nn

_Reference = Ensemble  # noqa: F821 (the reference's class)


class Ensemble(_Reference):
    def __init__(self, members):
        if not list(members):
            raise ValueError("Ensemble needs at least one member")
        nn.Module.__init__(self)
        self.members = nn.ModuleList(members)
