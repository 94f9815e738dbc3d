"""One way to show progress through a list of items (students graded, lessons checked).

On a terminal: one bar, rewritten in place, with how many items are done and an ETA. Anywhere
else (a CI log, a file): a line per item as it is done, with the time so far and the ETA, and
no control characters, unless the caller's output is the whole story (``log=False``: nothing
off a terminal, and the bar erased at the end). A line for an item that went wrong is printed
either way.

The ETA comes from units of work, which may be finer than the items (a student is graded in
one run per lesson): `advance` as each unit is done, `skip` for units that will not be.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """`total` items called `noun` ("students"), `work` units of work in all (default: one an item);
    `verb`: what is done to an item, as in "FAILED to grade x", and as in "graded 3 of 4"."""

    def __init__(
        self,
        total: int,
        noun: str,
        *,
        verb: tuple[str, str] = ("do", "done"),
        work: int | None = None,
        stream: TextIO | None = None,
        log: bool = True,
    ) -> None:
        self.total, self.noun, self.verb, self.log = total, noun, verb, log
        self.work = total if work is None else work
        self.stream = stream or sys.stderr  # looked up now: a default bound at import would outlive a redirect
        self.items = self.units = self.skipped = 0
        self.start = time.monotonic()
        self.tty = self.stream.isatty()
        self.last = 0.0  # when the bar was last drawn

    def advance(self, units: int = 1) -> None:
        """Units of work done."""
        self.units += units
        self._draw()

    def skip(self, units: int) -> None:
        """Units of work that will not be done (they leave the ETA)."""
        self.skipped += units

    def step(self, name: str, detail: str = "") -> None:
        """An item done: off a terminal, "[3/40] name: detail (12 s, ETA 1m05s)"."""
        self.items += 1
        if not self.tty and self.log:
            self._line(f"[{self.items}/{self.total}] {name}" + (f": {detail}" if detail else "") + f" ({self.eta()})")
        self._draw(force=True)

    def failed(self, name: str, problem: str) -> None:
        """An item that could not be done: a line, on a terminal too."""
        self.items += 1
        self._line(f"FAILED to {self.verb[0]} {name}: {problem}")
        self._draw(force=True)

    def eta(self) -> str:
        """The time so far, and the time left once a unit of work is done."""
        work = self.work - self.skipped
        elapsed = time.monotonic() - self.start
        if not self.units or not work:
            return f"{elapsed:.0f} s"
        left = elapsed / self.units * max(0, work - self.units)
        return f"{elapsed:.0f} s, ETA {int(left // 60)}m{int(left % 60):02d}s"

    def close(self) -> None:
        """The bar goes; a last line says how many items were done, and how long it took."""
        if self.tty:
            self.stream.write("\r\x1b[K")
        if self.log:
            self.stream.write(
                f"{self.verb[1]} {self.items} of {self.total} {self.noun} in {time.monotonic() - self.start:.0f} s\n"
            )
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if not self.tty or (not force and time.monotonic() - self.last < 0.25):
            return
        self.last = time.monotonic()
        fraction = self.units / max(1, self.work - self.skipped)
        bar = "#" * int(30 * fraction)
        self.stream.write(f"\r[{bar:<30}] {self.items}/{self.total} {self.noun}, {self.eta()}\x1b[K")
        self.stream.flush()

    def _line(self, text: str) -> None:
        self.stream.write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self.stream.flush()
