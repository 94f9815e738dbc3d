"""A key pressed at the terminal, for ``kata watch``: read at once, during a run too."""

from __future__ import annotations

import contextlib
import os
import sys
import time


class Keys:
    """Single keys from the terminal, read without Enter while the watcher waits (cbreak mode,
    restored by ``close``); ``live`` is False where stdin is not a terminal: no keys then."""

    def __init__(self, fd: int | None) -> None:
        self.fd, self.saved = fd, None
        if fd is not None:
            import termios
            import tty

            self.saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)  # keys at once, no echo; Ctrl-C still interrupts

    @classmethod
    def of_terminal(cls) -> Keys:
        try:
            interactive = os.name == "posix" and sys.stdin is not None and sys.stdin.isatty()
        except ValueError:  # a closed stdin
            interactive = False
        return cls(sys.stdin.fileno() if interactive else None)

    @property
    def live(self) -> bool:
        return self.fd is not None

    def read(self, timeout: float) -> str | None:
        """A key pressed within `timeout` seconds, or None (after sleeping, where there are no keys)."""
        if self.fd is None:
            time.sleep(timeout)
            return None
        import select

        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(self.fd, 1)
        return data.decode(errors="replace").lower() if data else None

    def close(self) -> None:
        if self.saved is not None:
            import termios

            with contextlib.suppress(termios.error):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            self.saved = None
