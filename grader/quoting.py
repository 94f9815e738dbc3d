"""How the kit quotes what the code under test raised or returned, inside its own sentence.

A library's error can run to a page: torch's list of overloads, a checkpoint loader's advice in
terminal colours, autograd's hint to turn on anomaly detection. The kit's own words carry the
meaning, so the quote only has to be recognisable: the first line, without colour codes or the
debugging hint, cut at a word. The tests (grader.testing) and the plugin quote through here, so
an error reads the same on either path.
"""

from __future__ import annotations

import re

# How grader.testing.compare opens what it saw ("got 0.5; expected 1.0 ..."): the plugin reads
# a line that opens so as an observation of one failure, never advice that others share.
OBSERVATIONS = ("values that differ: ", "got ")  # many values; one

SHOWN = 200  # characters of an error's text: a sentence or two, enough to recognise it

_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# autograd's and torch's advice on debugging tools, not on the learner's mistake
_DEBUGGING_HINT = re.compile(r"\s*(?:Hint: enable anomaly detection|HINT: |Hint: the backtrace).*$", re.DOTALL)


# torch.utils.data's worker re-raises an error in the main process as the same type, its message
# the worker's whole traceback: "Caught OSError in DataLoader worker process 0.\nOriginal Traceback ..."
_WORKER = re.compile(
    r"^Caught \S+ in DataLoader worker process \d+\.\s*\nOriginal Traceback \(most recent call last\):\n"
)
_HEADERS = (
    "Traceback (most recent call last):",
    "During handling of the above exception",
    "The above exception was the direct cause",
)
# OpenCV's failed check: "OpenCV(5.0.0) /io/opencv/.../color.cpp:199: error: (-215:Assertion failed) ..."
_OPENCV = re.compile(r"^OpenCV\([^)]*\) \S+:\d+: error: ")


def error_name(exc: BaseException) -> str:
    """`exc`'s type as the learner would catch it: "OSError", and outside the builtins with its
    module, "cv2.error", "tarfile.StreamError"; a private type by its nearest public base
    (NumPy's numpy._core._exceptions._ArrayMemoryError is a MemoryError)."""
    for kind in type(exc).__mro__:
        if kind.__module__ == "builtins":
            return kind.__qualname__
        if not any(part.startswith("_") for part in (*kind.__module__.split("."), kind.__qualname__)):
            return f"{kind.__module__}.{kind.__qualname__}"
    return type(exc).__name__


def _original(text: str) -> str:
    """The message a DataLoader worker's error had in the worker (`text`: what the main process's
    copy says, "Caught ... Original Traceback ... OSError: could not read ..."), else `text`."""
    if not _WORKER.match(text):
        return text
    lines = text.splitlines()
    start = None  # the last line that opens the error: unindented, after an indented (a frame's)
    for k in range(1, len(lines)):
        if lines[k][:1] not in ("", " ") and lines[k - 1][:1] == " " and not lines[k].startswith(_HEADERS):
            start = k
    if start is None:
        return text
    said = lines[start]
    name, colon, message = said.partition(": ")
    first = message if colon and " " not in name else said
    return "\n".join([first, *lines[start + 1 :]])


def error_text(exc: BaseException) -> str:
    """`exc`'s message as the kit quotes it: the first line that says something (a DataLoader
    worker's error: the worker's own message, not torch's account of where it was caught; an
    OpenCV check: without OpenCV's version and source file), without terminal colour codes or a
    hint about debugging tools; past SHOWN characters, its whole sentences that fit, else a cut
    at a word ("...")."""
    text = _DEBUGGING_HINT.sub("", _COLOUR.sub("", _original(str(exc))))
    text = _OPENCV.sub("", text.lstrip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(first) > SHOWN:  # whole sentences where one ends in reach, else a cut at a word
        stops = [m.end() for m in re.finditer(r"[.!?](?=\s)", first[: SHOWN + 1]) if m.end() >= SHOWN // 4]
        return first[: stops[-1]] if stops else first[:SHOWN].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."
    return first.rstrip(" ,;:") + " ..." if len(lines) > 1 else first


def quoted(exc: BaseException) -> str:
    """ "TypeError('where() received an invalid combination of arguments ...')": the error as a
    kit sentence names it after "raised" (a type outside the builtins with its module:
    "cv2.error('(-215:Assertion failed) !_src.empty() in function ...')")."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and len(repr(exc.args[0])) <= SHOWN:
        return f"{error_name(exc)}({exc.args[0]!r})"  # the key as it is: 3 is not '3'
    return f"{error_name(exc)}({error_text(exc)!r})"


def error_line(exc: BaseException) -> str:
    """ "TypeError: where() received ...": the error as the last line of a traceback names it
    (outside the builtins with its module, as Python's own traceback does: "cv2.error: ..."). An
    assert's error stays whole: its lines are pytest's account of the values ("+  where 0 = ...")."""
    text = str(exc) if isinstance(exc, AssertionError) else error_text(exc)
    return f"{error_name(exc)}: {text}" if text else error_name(exc)


# A comprehension's own frame (Python 3.11 gives it one; 3.12 inlines it), at the line of the
# frame that runs it: shown, it repeats that line word for word.
COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def repeats(previous: tuple[str, int] | None, file: str, line: int, function: str) -> bool:
    """Whether a traceback's frame (`file`, `line`, `function`) only repeats the one shown
    before it, at (file, line): a comprehension's frame inside the function that runs it."""
    return function in COMPREHENSIONS and previous == (file, line)
