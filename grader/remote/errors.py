"""The errors the tests' process raises for the code process (S, grader.remote.server).

The kit's own: `Unremotable` (what a test used cannot cross), `Refused` (S could not read a
request), `Gone` (S can answer no more). And the learner's: `raise_error` raises an error S
sent as its built-in type, with the learner's frames rebuilt as its traceback, reading only
the learner's regular files for their lines (`_learners_file`).
"""

from __future__ import annotations

import linecache
import sys
from pathlib import Path
from types import MappingProxyType

from grader import running
from grader.files import read_beneath
from grader.remote import wire
from grader.stand_ins import CallTimedOut, LoopReached

# The built-in exceptions an error of the code under test may be raised as here. Not
# BaseException's other children (SystemExit, KeyboardInterrupt, GeneratorExit): nothing S
# sends may end or steer this process; pytest's and hypothesis's own (skip, xfail) are not
# built-ins.
_RAISABLE = MappingProxyType(
    {name: t for name, t in vars(__import__("builtins")).items() if isinstance(t, type) and issubclass(t, Exception)}
)


class Unremotable(AssertionError):
    """A test used something of the module under test that cannot cross to another process.
    The test is noted (grader.running.note_unremotable) even where it catches this."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        running.note_unremotable()


class Refused(AssertionError):
    """S could not read what the tests sent: the kit's error, not the learner's."""


class Gone(AssertionError):
    """S ended, or broke the protocol: the code under test can answer no more calls."""


def raise_error(reply: dict, roots: tuple[Path, ...] = (), read: dict[str, Path] | None = None):
    """Raise S's error here: as its built-in type, with the learner's frames as its traceback
    (only frames in files under `roots`, the learner's folders: `_learners_file`, which keeps
    in `read` those it read)."""
    __tracebackhide__ = True
    read = {} if read is None else read
    record = reply["error"]
    if not isinstance(record, dict):
        raise Gone("the process running the code under test sent an error that is not one")
    if reply.get("refused"):
        raise Refused(str(record.get("message", "")))
    if reply.get("unremotable"):
        raise Unremotable(f"{record.get('message', '')}: the tests cannot check this result from another process")
    message, name = str(record.get("message", "")), str(record.get("name", ""))
    kind = _RAISABLE.get(record.get("type"), RuntimeError)
    frames = record.get("frames", [])
    frames = frames if isinstance(frames, list) else []
    if type(reply.get("waiting")) is int:  # a function stopped in an earlier test's loop (grader.plugin.loops)
        raise LoopReached(reply["waiting"]).with_traceback(_traceback(frames, roots, read))
    if reply.get("timeout"):
        exc = CallTimedOut("the call did not finish in its time limit")
    elif kind is SyntaxError and isinstance(record.get("syntax"), list) and len(record["syntax"]) == 5:
        msg, filename, lineno, offset, text = record["syntax"]
        filename = str(filename) if _learners_file(str(filename), roots, read) else "<the code under test>"
        exc = SyntaxError(str(msg), (filename, int(lineno), int(offset), str(text)[: wire.MAX_TEXT]))
    else:
        exc = kind(message) if name == kind.__name__ else kind(f"{message}" if message else name)
        if kind is not RuntimeError and name != kind.__name__:
            exc.add_note(f"({name} in the code under test)")
        if isinstance(exc, OSError) and type(record.get("errno")) is int:
            exc.errno = record["errno"]
    for note in record.get("notes", [])[:10]:
        exc.add_note(str(note))
    raise exc.with_traceback(_traceback(frames, roots, read))


def _traceback(frames: list, roots: tuple[Path, ...], read: dict[str, Path]):
    """A traceback whose entries are the learner's frames (file, line, function), made by raising
    from code compiled at that file and line, so every tool that reads frames reads them. A
    frame whose file is not the learner's is left out: S names the files, and what reads a
    traceback here reads its files' lines (pytest's report among them)."""
    tb = None
    for entry in reversed(frames[-wire.MAX_FRAMES :]):
        try:
            filename, lineno, name = str(entry[0]), int(entry[1]), str(entry[2])
        except (TypeError, ValueError, IndexError):
            continue
        if not 0 < lineno < 1_000_000 or not _learners_file(filename, roots, read):
            continue
        code = compile("\n" * (lineno - 1) + "raise __kata_exc__", filename, "exec")
        code = code.replace(co_name=name[:200], co_qualname=name[:200])
        try:
            exec(code, {"__kata_exc__": _Marker()})
        except _Marker:
            entry_tb = sys.exc_info()[2].tb_next
        entry_tb.tb_next = tb
        tb = entry_tb
    return tb


class _Marker(Exception):
    pass


MAX_SOURCE = 1 << 20  # bytes of a learner's file read for its lines


def _learners_file(filename: str, roots: tuple[Path, ...], read: dict[str, Path] | None = None) -> bool:
    """Whether `filename`, named by S, is a regular file of the learner's, beneath one of
    `roots`; its lines are then read once, now, into linecache, where every reader of frames
    finds them and none opens the path again (S may change what it leads to meanwhile), and
    the folder it was read beneath kept in `read` (by the name S gave). Nothing else is opened
    for reading (grader.files.read_beneath): no link, FIFO or device, nothing outside the
    learner's folders."""
    read = {} if read is None else read
    if filename in read and filename in linecache.cache:  # read already, by this check
        return read[filename] in roots
    if not filename.startswith("/"):
        return False
    for root in roots:
        data = read_beneath(root, filename, MAX_SOURCE)
        if data is not None:
            break
    else:
        return False
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    linecache.cache[filename] = (len(data), None, lines, filename)  # no mtime: never read again from disk
    read[filename] = root
    return True
