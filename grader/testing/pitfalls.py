"""A pitfall named from a wrong result: the one helper every lesson's tests use for it.

A test that finds a wrong result may say why, but only when the cause is likely: when the
learner's result is exactly what code that fell into a known pitfall returns on the same inputs,
and the right answer differs from it there (otherwise a right answer could have given it too).
A lesson lists its pitfalls as data, each with the code that falls into it:

    PITFALLS = [Pitfall(lambda t, dim: t.exp() / t.exp().sum(dim, keepdim=True), OVERFLOW,
                        shows=lambda t, dim: t.exp().isinf().any())]
    told = pitfall_of(got, right, PITFALLS, t, dim) or ""

A pitfall whose code raises is named from the learner's error instead: by pitfall_raising, when
that code raises the very same error on the same inputs; by pitfall_saying, an `ErrorPitfall`,
when the error says what only that pitfall's error says (and the inputs can raise it so):

    ERRORS = [ErrorPitfall(r"view size is not compatible", VIEW, shows=lambda t: not t.is_contiguous())]
    told = pitfall_saying(error, ERRORS, t)

(grader.pitfalls names the pitfalls an error alone gives away, whatever the test.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from grader.testing.compare import same
from grader.testing.errors import raises_the_same


def _always(*inputs) -> bool:
    return True


@dataclass(frozen=True)
class Pitfall:
    gives: Callable[..., object]  # what code that falls into it returns, from the test's inputs
    told: str  # what the learner reads: the pitfall and its fix
    shows: Callable[..., bool] = _always  # whether these inputs can tell it from a right answer


def pitfall_of(
    got,
    right,
    pitfalls: Iterable[Pitfall],
    *inputs,
    match: Callable[[object, object], bool] = same,
    explains: Callable[[object, object, object], bool] | None = None,
) -> str | None:
    """The words of the first of `pitfalls` whose result on `inputs` `got` matches and `right` does
    not, else None. A pitfall whose code raises on these inputs, or that they cannot show, is passed
    over: it is not what happened. `explains(got, wrong, right)`, where given, judges instead of
    `match` whether the pitfall's result `wrong` is the cause (a lesson that weighs how much closer
    `got` is to it than to `right`, or looks at gradients too)."""
    for pitfall in pitfalls:
        try:
            if not pitfall.shows(*inputs):
                continue
            wrong = pitfall.gives(*inputs)
            if explains(got, wrong, right) if explains else (match(got, wrong) and not match(right, wrong)):
                return pitfall.told
        except Exception:  # noqa: BLE001 (a pitfall's code that cannot run on these inputs names nothing)
            continue
    return None


def pitfall_raising(error: BaseException, pitfalls: Iterable[Pitfall], *inputs) -> str | None:
    """The words of the first of `pitfalls` whose code raises `error` itself (the same type and
    message) on `inputs`, else None: the learner's error is then that pitfall's."""
    for pitfall in pitfalls:
        if pitfall.shows(*inputs) and raises_the_same(partial(pitfall.gives, *inputs), error):
            return pitfall.told
    return None


def pitfalls_of(
    got, right, pitfalls: Iterable[Pitfall], *inputs, match: Callable[[object, object], bool] = same
) -> list[str]:
    """The words of every one of `pitfalls` that pitfall_of would name here, in their order. A test
    that names a pitfall only where one alone fits (two that give the same result cannot tell which
    one the learner fell into) takes the words of a list of one."""
    return [pitfall.told for pitfall in pitfalls if pitfall_of(got, right, [pitfall], *inputs, match=match) is not None]


@dataclass(frozen=True)
class ErrorPitfall:
    says: str  # a regular expression searched in the error's message: what only this pitfall's error says
    told: str | Callable[..., str | None]  # its words, or a function of (the error, *inputs) that gives them
    shows: Callable[..., bool] = _always  # whether these inputs can raise it so


def pitfall_saying(error: BaseException, pitfalls: Iterable[ErrorPitfall], *inputs) -> str | None:
    """The words of the first of `pitfalls` whose `says` is in `error`'s message and that `inputs`
    can show, else None. A `told` function that gives None passes over its pitfall: the message
    fits, but the error (its numbers, the learner's line) is not that pitfall's after all."""
    for pitfall in pitfalls:
        if re.search(pitfall.says, str(error)) and pitfall.shows(*inputs):
            told = pitfall.told(error, *inputs) if callable(pitfall.told) else pitfall.told
            if told is not None:
                return told
    return None
