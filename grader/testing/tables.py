"""A table a test file defines below its tests, for `@pytest.mark.parametrize`.

A lesson's test file starts with its tests; the tables of cases they run on come after them.
A decorator runs before the rest of the file does, so it names the table instead of holding it:

    @pytest.mark.parametrize("shape", below("SHAPES"))
    def test_x(lesson, shape): ...

    SHAPES = [(2, 3), (0, 4)]

pytest reads a parametrize mark's values only when it collects the tests, by which time the whole
file has run and the name is bound.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence


def below(name: str) -> Sequence:
    """The module-level table `name` of the test file that calls this, looked up when first read."""
    return Table(name, sys._getframe(1).f_globals)  # the file's globals, filled in as it runs


class Table(Sequence):
    """A table named in a module's globals, read from them at each use."""

    def __init__(self, name: str, scope: dict) -> None:
        self.name = name
        self._scope = scope

    def _table(self) -> Sequence:
        try:
            return self._scope[self.name]
        except KeyError:
            raise NameError(f"no table {self.name!r} in {self._scope.get('__file__', 'the test file')}") from None

    def __getitem__(self, index):
        return self._table()[index]

    def __len__(self) -> int:
        return len(self._table())

    def __iter__(self) -> Iterator:
        return iter(self._table())

    def __repr__(self) -> str:
        return f"below({self.name!r})"
