"""Ensemble adds the members' outputs into the first one in place (+=): when the first member returns x itself (nn.Identity), the caller's x is overwritten."""

EXPECT = r"in place \(\+=, add_"

_Reference = Ensemble  # noqa: F821 (the reference's class)


class Ensemble(_Reference):
    def forward(self, x):
        total = self.members[0](x)
        for member in self.members[1:]:
            total += member(x)  # no temporary stack
        return total / len(self.members)
