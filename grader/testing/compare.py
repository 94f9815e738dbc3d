"""Tensor comparison with messages that say what was called and by how much it is off."""

from __future__ import annotations

import ast
import re
import sys
from contextlib import contextmanager
from types import MappingProxyType
from typing import Callable

import torch
from torch.testing import _comparison

from grader.quoting import OBSERVATIONS

DIFFER, GOT = OBSERVATIONS  # how a comparison opens what it saw (the plugin tells it from advice)
DIGITS = 5  # the significant digits of a number in a message, wherever it is shown

# (rtol, atol) for results a correct implementation computes in a different order than the
# reference: a few units in the last place of each dtype.
_TOLERANCE = MappingProxyType(
    {
        torch.float64: (1e-7, 1e-7),
        torch.float32: (1e-5, 1e-6),
        torch.float16: (4e-3, 1e-4),
        torch.bfloat16: (2e-2, 1e-4),
    }
)


def tolerance(dtype: torch.dtype) -> dict[str, float]:
    """``rtol``/``atol`` for comparing two correct computations in `dtype`."""
    rtol, atol = _TOLERANCE[dtype]
    return {"rtol": rtol, "atol": atol}


def assert_close(
    actual,
    expected,
    *,
    what: str = "the result",
    equal_nan: bool = True,
    explain: Callable[[], str] | None = None,
    **kwargs,
) -> None:
    """``torch.testing.assert_close`` (dtype, shape, device, values), prefixed with `what`.

    `what` names the call, e.g. ``"stable_softmax(x, dim=1) for x of shape (3, 4)"``, so the
    learner reads which call went wrong before what is off ("3 of 8 values differ; the worst is
    at index (0, 2): got nan, expected 0.25."): torch decides, the kit tells it.
    NaN equals NaN by default: the lessons match torch's behaviour, NaNs included.
    `explain`, called only on a failure, returns the pitfall behind it and its fix when the
    result has that pitfall's signature, else "": its words follow torch's.
    """
    __tracebackhide__ = True
    if explain is not None:
        try:
            assert_close(actual, expected, what=what, equal_nan=equal_nan, **kwargs)
            return
        except AssertionError as exc:
            cause = explain()
            if not cause:
                raise
            message = f"{exc}\n{cause}"
        raise AssertionError(message)  # outside `except`: no chained traceback
    if isinstance(expected, torch.Tensor) and not isinstance(actual, torch.Tensor):
        raise AssertionError(
            f"{what}: expected a torch.Tensor, got {type(actual).__name__}"
            + (" (did the function forget to `return`?)" if actual is None else "")
        )
    try:
        with _no_dtensor_import():
            torch.testing.assert_close(actual, expected, equal_nan=equal_nan, **kwargs)
    except AssertionError as exc:
        message = _in_our_words(str(exc), what, actual, expected, {"equal_nan": equal_nan, **kwargs})
    else:
        return
    raise AssertionError(message)  # outside `except`: no chained traceback


def _in_our_words(message: str, what: str, actual, expected, tolerance: dict) -> str:
    """torch's assert_close verdict told in the kit's words after `what`: which side is the
    learner's ("got ..., expected ...", not "returned": what is compared may be an argument
    after the call), the worst element's index and both values, and by how much it is off
    against how much is allowed there. The item of a mapping or sequence it is about is named
    ("..., at model[0].weight:"), a mismatch of keys said in one line. What this cannot read from the
    data (a layout, a complex value) keeps torch's words."""
    item = re.search(r"\n\nThe failure occurred for item (.+)$", message)
    if item:
        message = message[: item.start()]
        path = item.group(1)  # ['0.weight'], [2], ['state'][0]
        actual, expected = _item(actual, path), _item(expected, path)
        one = re.fullmatch(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+)\]", path)
        if one:  # a key as its words (model[0].weight), a position as "item 2"
            key = one.group(1)
            path = ast.literal_eval(key) if key[0] in "'\"" else f"item {key}"
        what = f"{what}, at {path}"
    keys = re.fullmatch(
        r"The keys of the mappings do not match:\nMissing keys in the actual mapping: (.*)\n"
        r"Additional keys in the actual mapping: (.*)",
        message,
    )
    if keys:
        missing, extra = keys.groups()
        message = "; ".join(
            [
                *([f"{GOT}keys not expected: {extra}"] if extra != "[]" else []),
                *([f"keys missing: {missing}"] if missing != "[]" else []),
            ]
        )
    else:
        try:
            message = _told(message, actual, expected, tolerance) or message
        except Exception:  # noqa: BLE001 (an object the data cannot be read from keeps torch's words)
            pass
    return f"{what}:\n{message}"


def _item(container, path: str):
    """The element of `container` that torch's "item ['state'][0]" names, or None."""
    try:
        for key in re.findall(r"\[((?:'(?:[^'\\]|\\.)*')|(?:\"(?:[^\"\\]|\\.)*\")|-?\d+)\]", path):
            container = container[ast.literal_eval(key)]
    except Exception:  # noqa: BLE001 (a path this cannot follow: torch's words are kept)
        return None
    return container


def _told(message: str, actual, expected, tolerance: dict) -> str | None:
    """The kit's words for torch's `message` about `actual` against `expected`, or None."""
    attribute = re.match(r"The values for attribute '(\w+)' do not match", message)
    if attribute and isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor):
        said = {
            "shape": lambda t: f"shape {tuple(t.shape)}",
            "dtype": lambda t: dtype_name(t.dtype),
            "device": lambda t: f"a tensor on {t.device}",
        }.get(attribute.group(1))
        return f"{GOT}{said(actual)}; expected {said(expected)}." if said else None
    if re.match(r"The \(d\)types do not match", message):
        return f"{GOT}{actual!r} ({type(actual).__name__}); expected {expected!r} ({type(expected).__name__})."
    if message.startswith(("Tensor-likes are not", "Scalars are not")):
        return _values(actual, expected, tolerance)
    return None


def _values(actual, expected, tolerance: dict) -> str | None:
    """Values that differ: how many, and the worst one (a NaN or an infinity where the other
    side has none first, else the largest difference), with both values and what is allowed."""
    a, e = (torch.as_tensor(v).detach().cpu() for v in (actual, expected))
    if a.shape != e.shape or a.is_complex() or e.is_complex() or a.is_sparse or e.is_sparse:
        return None
    exact = not (a.is_floating_point() or e.is_floating_point())
    rtol, atol = (0.0, 0.0) if exact else (tolerance.get("rtol"), tolerance.get("atol"))
    if rtol is None or atol is None:
        rtol, atol = _comparison.default_tolerances(a, e)
    a64, e64 = a.to(torch.float64), e.to(torch.float64)
    wrong = ~torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=tolerance.get("equal_nan", True))
    if not wrong.any():
        return None
    gap = (a64 - e64).abs().nan_to_num(nan=float("inf")).where(wrong, -1.0)  # a NaN against a number: the worst
    at = _index(int(gap.argmax()), a.shape)
    mine, theirs = a[at].item(), e[at].item()
    got, want = apart(mine, theirs)
    off = None if isinstance(mine, bool) else abs(mine - theirs)
    allowed = atol + rtol * abs(theirs)
    how = ""
    if off is not None and off == off and off != float("inf"):  # a tolerance is a bound: two digits say it
        how = f" (off by {number(off)}; allowed {number(allowed, 2)})" if allowed else f" (off by {number(off)})"
    if a.numel() == 1:  # the call's line names the shape: one value needs no index
        return f"{GOT}{got}; expected {want}{how}."
    # The same words whatever the count: a failure on 1 value and one on 3 read alike, and group.
    return f"{DIFFER}{int(wrong.sum())} of {a.numel()}; the worst is at index {at}: got {got}, expected {want}{how}."


def _index(flat: int, shape: torch.Size) -> tuple[int, ...]:
    """The index of the `flat`-th element of a contiguous tensor of `shape` (torch.unravel_index
    does this too, but its first call imports sympy: a quarter of a second on a failing run)."""
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def apart(mine, theirs) -> tuple[str, str]:
    """Two values as a message sets them side by side (got, expected): each as `number` writes it,
    with more digits where it takes them to tell the two apart and show by how much they differ,
    and, where both have the same digits before the point, as many after it ("1.5820", "1.5817")."""
    if not (isinstance(mine, float) or isinstance(theirs, float)):
        return str(mine), str(theirs)
    gap = mine - theirs
    for digits in range(DIGITS, 18):
        got, want = number(mine, digits), number(theirs, digits)
        shown = float(got) - float(want)
        if got != want and (gap != gap or abs(gap) == float("inf") or abs(shown - gap) <= 0.1 * abs(gap)):
            break
    return _aligned(mine, theirs, got, want)


def number(value, digits: int = DIGITS) -> str:
    """A number as every message writes it: an int as it is; a float to `digits` significant
    digits (below 1e6, every digit before the point and two after it: 10000.69, where the 0.69
    may be the point), always written as a float (2.0), with an exponent from 1e6 up and below
    1e-4 (1.1688e+08, 2.5e-07)."""
    if not isinstance(value, float):
        return str(value)
    if value == value and 1 <= abs(value) < 1e6:
        digits = max(digits, len(str(int(abs(value)))) + 2)
    text = f"{value:.{digits}g}"
    return text if any(c in text for c in ".ein") else f"{text}.0"


def _aligned(mine: float, theirs: float, got: str, want: str) -> tuple[str, str]:
    """`got` and `want` (`mine` and `theirs` as `number` wrote them) with as many decimals, where
    both are written without an exponent, with the same count of digits before the point, and
    the shorter was cut by the digits shown (1.582 beside 1.5817 reads 1.5820; 0.2 stays 0.2)."""
    if any(c in text for text in (got, want) for c in "ein") or 0.0 in (mine, theirs):
        return got, want
    (g_int, _, g_frac), (w_int, _, w_frac) = got.partition("."), want.partition(".")
    if len(g_int.lstrip("-")) != len(w_int.lstrip("-")) or len(g_frac) == len(w_frac):
        return got, want
    decimals = max(len(g_frac), len(w_frac))
    if len(g_frac) < decimals and len((g_int + g_frac).lstrip("-0")) >= DIGITS - 1:
        got = f"{mine:.{decimals}f}"
    if len(w_frac) < decimals and len((w_int + w_frac).lstrip("-0")) >= DIGITS - 1:
        want = f"{theirs:.{decimals}f}"
    return got, want


def fail(message: str) -> None:
    """Fail the test with the kit's message alone (no traceback, no pytest introspection, and
    no "During handling of the above exception" banner where it is called while an error is
    being handled: in an ``except``, or in a context manager's exit). A helper that reports
    each failure through this one line lets hypothesis count them as one failure, not as
    "distinct failures" in an exception group."""
    __tracebackhide__ = True
    import pytest

    raise pytest.fail.Exception(message, pytrace=False) from None


def mismatch(actual, expected, *, what: str, **tolerance) -> str | None:
    """assert_close's message when `actual` is not `expected`, or None when they agree."""
    try:
        assert_close(actual, expected, what=what, **tolerance)
    except AssertionError as exc:
        return str(exc)
    return None


def assert_defaults(call: Callable[..., object], *, what: str, **defaults) -> None:
    """``call()`` must give what ``call(**defaults)`` gives: each argument left out takes the
    default the lesson's docstring states. `what` names the call without them, e.g.
    ``"logsumexp(x) for x of shape (2, 3, 4)"``. The two results are compared exactly: tensors
    (alone or in tuples, lists and dicts) as assert_close does, anything else with ``==``."""
    __tracebackhide__ = True
    given, left_out = call(**defaults), call()
    said = ", ".join(f"{name}={value!r}" for name, value in defaults.items())
    where = f"{what}, which leaves out {said}, against the same call with {said} given"
    if isinstance(given, (torch.Tensor, tuple, list, dict)):
        wrong = mismatch(left_out, given, what=where, rtol=0, atol=0)
    else:
        wrong = None if left_out == given else f"{where}: {left_out!r} instead of {given!r}"
    if wrong is not None:
        fail(
            f"{wrong}\nA caller who leaves an argument out gets the default the docstring's signature states "
            f"({said}): give the parameter that default."
        )


def same(actual, expected, **tolerance) -> bool:
    """Whether assert_close would accept `actual` as `expected` (what a pitfall's signature is
    compared with)."""
    return mismatch(actual, expected, what="", **tolerance) is None


@contextmanager
def _no_dtensor_import():
    """Skip torch's DTensor check while no DTensor can exist.

    ``torch.testing.assert_close`` imports ``torch.distributed.tensor`` on its first call, to see
    whether an input is a DTensor: a large share of a lesson's whole run (docs/PERFORMANCE.md,
    section 1). An object can
    only be a DTensor once that module is loaded, so until then the check has nothing to find.
    """
    if "torch.distributed.tensor" in sys.modules or not getattr(_comparison, "_HAS_DTENSOR", False):
        yield
        return
    _comparison._HAS_DTENSOR = False
    try:
        yield
    finally:
        _comparison._HAS_DTENSOR = True


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and `noun`, the noun plural unless the number is 1: "1 shard", "3 shards",
    "0 shards" (`plural` for a noun that does not take an s: counted(2, "index", "indices"))."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def numbers(values) -> str:
    """Numbers as a message lists them, each as `number` writes it: "[0.95452, -0.87371, 1.0]" for
    a list or a tensor of floats (its values in order, whatever its shape), "[1, 2]" for ints."""
    flat = values.detach().flatten().tolist() if isinstance(values, torch.Tensor) else list(values)
    return f"[{', '.join(number(v) for v in flat)}]"


def dtype_name(dtype: torch.dtype) -> str:
    """A dtype as messages write it: "float64", not "torch.float64"."""
    return str(dtype).removeprefix("torch.")


def attribute(name: str) -> str:
    """A name from named_parameters() as the learner writes it: "0.weight" is model[0].weight,
    "body.2.bias" model.body[2].bias."""
    return "model" + "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in name.split("."))


def describe(t: torch.Tensor, layout: str | None = None) -> str:
    """A short description of a tensor for failure messages: "shape (4, 2), float32" and
    ", non-contiguous" where it is not. With the `layout` a test gave it (strategies.ALL_LAYOUTS'
    names), that layout is said: "..., transposed (non-contiguous)", or "..., contiguous" where
    the tensor is (a layout of one row can be)."""
    if layout is not None:
        said = layout if layout != "contiguous" and not t.is_contiguous() else "contiguous"
        return f"shape {tuple(t.shape)}, {dtype_name(t.dtype)}, {said}" + (
            "" if said == "contiguous" else " (non-contiguous)"
        )
    return f"shape {tuple(t.shape)}, {dtype_name(t.dtype)}" + ("" if t.is_contiguous() else ", non-contiguous")
