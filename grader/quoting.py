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


def error_text(exc: BaseException) -> str:
    """`exc`'s message as the kit quotes it: the first line that says something, without terminal
    colour codes or a hint about debugging tools; past SHOWN characters, its whole sentences that
    fit, else a cut at a word ("...")."""
    text = _DEBUGGING_HINT.sub("", _COLOUR.sub("", str(exc)))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(first) > SHOWN:  # whole sentences where one ends in reach, else a cut at a word
        stops = [m.end() for m in re.finditer(r"[.!?](?=\s)", first[:SHOWN + 1]) if m.end() >= SHOWN // 4]
        return first[:stops[-1]] if stops else first[:SHOWN].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."
    return first.rstrip(" ,;:") + " ..." if len(lines) > 1 else first


def quoted(exc: BaseException) -> str:
    """"TypeError('where() received an invalid combination of arguments ...')": the error as a
    kit sentence names it after "raised"."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and len(repr(exc.args[0])) <= SHOWN:
        return f"{type(exc).__name__}({exc.args[0]!r})"  # the key as it is: 3 is not '3'
    return f"{type(exc).__name__}({error_text(exc)!r})"


def error_line(exc: BaseException) -> str:
    """"TypeError: where() received ...": the error as the last line of a traceback names it. An
    assert's error stays whole: its lines are pytest's account of the values ("+  where 0 = ...")."""
    text = str(exc) if isinstance(exc, AssertionError) else error_text(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
