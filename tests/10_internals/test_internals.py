"""Lesson 10, tensor internals: checks internals.py bit for bit against PyTorch's own bfloat16
conversion, against torch.finfo and brute force, and against Tensor.unfold; a wrong result that
one of the lesson's pitfalls gives is named with its fix. `lesson` is the module under test (the
learner's, the reference, or a mutant). The contract table is CONTRACT, at the end."""

import operator
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.testing import (assert_close, below, counted, describe, dtype_name, expect_raises, explained, forbid, reported,
                            trace_ops)
from grader.testing.pitfalls import Pitfall, pitfall_of
from grader.testing.scenario import beside
from grader.testing.strategies import ALL_LAYOUTS, ANY_DTYPE, cast, edge_shapes, on_meta, shapes, tensors, with_layout


# --- what the tests' @example inputs are built with, when the file runs -------------------------


def from_bits(*patterns: int) -> torch.Tensor:
    """A float32 tensor holding these bit patterns, written as unsigned hex (0x7F800001)."""
    signed = [(p ^ 0x8000_0000) - 0x8000_0000 for p in patterns]  # the same 32 bits as an int32
    return torch.tensor(signed, dtype=torch.int32).view(torch.float32)


def make_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """x's values in another layout: dim 0 with stride 1, step-2 rows, or a nonzero storage offset."""
    if layout == "dim 0 innermost":
        return x.movedim(0, -1).contiguous().movedim(-1, 0)
    if layout == "offset":
        return torch.cat([x[:1].expand(3, *x.shape[1:]), x])[3:]
    if layout == "expanded inner dim":  # a stride of 0 in dim 1 (the values change: unfold sees the same x)
        return x[:, :1].expand(x.shape) if x.dim() > 1 and x.shape[1] > 0 else x
    return with_layout(x, layout)


def sequence(length: int, *rest: int, layout: str = "offset") -> torch.Tensor:
    return make_layout(torch.arange(length * int(np.prod(rest, dtype=np.int64)), dtype=torch.float32)
                       .reshape(length, *rest), layout)


# --- the lesson's table and worked examples ------------------------------------------------------


@pytest.mark.public
@pytest.mark.points(2)
def test_worked_examples_round_to_nearest_even(lesson):
    # The lesson text's hex examples: 1 + 2**-8 is a tie that stays at 1.0 (even), 1 + 3*2**-8 a tie
    # that goes up to 1 + 2**-6, a hair above a tie rounds up; float16's largest, 65504, becomes 65536.
    x = torch.tensor([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, 1 + 2**-9, 65504.0, -3.0])
    check_round(lesson, x, "round_to_bfloat16(tensor([1, 1+2**-8, 1+3*2**-8, ...]))")


@pytest.mark.public
@pytest.mark.points(2)
def test_float16_and_bfloat16_facts_from_the_table(lesson):
    # The lesson text's table: float16 reaches 65504 and steps from 1 to 1 + 2**-10; bfloat16
    # reaches about 3.39e38 and steps from 1 to 1 + 2**-7.
    for (e, m), name in (((5, 10), "float16"), ((8, 7), "bfloat16")):
        info = torch.finfo(getattr(torch, name))
        check_limits(lesson.float_limits(e, m), (info.max, info.eps, info.smallest_normal),
                     f"float_limits({e}, {m}) ({name})", f"the table in the lesson text (torch.finfo(torch.{name}))",
                     e, m)


@pytest.mark.public
def test_windows_of_a_short_sequence(lesson):
    x = torch.arange(7.0)
    what = "sliding_windows(torch.arange(7.), size=3, step=2)"
    out = windows_of(lesson, x, 3, 2, what)
    expected = torch.tensor([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]])
    if isinstance(out, torch.Tensor):
        why = windows_pitfall(out, x, 3, 2)
        if why:
            raise AssertionError(f"{what} is not {expected}.{why}")
    assert_close(out, expected, rtol=0, atol=0, what=what)


# --- round_to_bfloat16: bit for bit, everywhere -------------------------------------------------


@pytest.mark.points(2)
def test_round_matches_torch_on_a_million_random_bit_patterns(lesson):
    # Uniform bits: every exponent equally likely, so zeros, subnormals, infs, NaNs and about
    # 16 exact ties are all in there, with both signs.
    bits = torch.randint(-2**31, 2**31, (2**20,), dtype=torch.int32, generator=torch.Generator().manual_seed(10))
    x = bits.view(torch.float32)
    what = "round_to_bfloat16(x) for 2**20 random float32 bit patterns"
    check_round(lesson, x, what)


@pytest.mark.points(2)
@pytest.mark.parametrize("name", below("CLASSES"))  # its names
def test_round_matches_torch_on_tricky_classes(lesson, name):
    x = from_bits(*CLASSES[name])
    check_round(lesson, x, f"round_to_bfloat16(x) for {name}")


@pytest.mark.points(2)
def test_nans_stay_nans(lesson):
    x = from_bits(*NANS)  # signalling and quiet, both signs, payloads only in the low 16 bits too
    check_round(lesson, x, "round_to_bfloat16(x) for NaNs with all kinds of payload")


@given(tensors(shape=edge_shapes(), scales=(1.0, 1e-40, 1e34), layouts=ALL_LAYOUTS))
@example(torch.tensor(-0.0))
@example(torch.tensor(float("nan")))
@example(from_bits(0x7F80_0001)[0])  # a 0-d NaN whose payload is only in the low 16 bits
@example(from_bits(0x7F7F_FFFF))  # one element, rounds to inf
@example(torch.empty(0, 3).t())
def test_round_keeps_shape_and_layout(lesson, x):
    check_round(lesson, x, f"round_to_bfloat16(x) for x of {describe(x)}, stride {x.stride()}")


@pytest.mark.parametrize("layout", below("VIEWS"))  # its names
def test_round_of_a_view(lesson, layout):
    x = VIEWS[layout](EVERY_CLASS[: 8 * (EVERY_CLASS.numel() // 8)].reshape(8, -1))
    check_round(lesson, x, f"round_to_bfloat16(x) for x of {describe(x)}, stride {x.stride()}, storage offset "
                           f"{x.storage_offset()} ({layout}{'' if layout == 'requires grad' else ' view'})")


def test_round_does_not_modify_x(lesson):
    x = EVERY_CLASS.clone()
    out = lesson.round_to_bfloat16(x)
    changed = (bits_of(x) != bits_of(EVERY_CLASS)).sum().item()
    if changed:
        pytest.fail((
            f"round_to_bfloat16(x) changed {counted(changed, 'element')} of the caller's x. x.view(torch.int32) shares x's "
            "memory: an in-place op on it (+=, add_, bitwise_and_) writes into x. Use out-of-place ops."
        ), pytrace=False)
    out.view(torch.int32).fill_(0x3F80_0000)  # the caller writes to the result: x must not see it
    changed = (bits_of(x) != bits_of(EVERY_CLASS)).sum().item()
    if changed:
        pytest.fail((
            f"writing to the result of round_to_bfloat16(x) changed {counted(changed, 'element')} of x: return a new tensor, "
            "not x or a view of x's memory"
        ), pytrace=False)


@pytest.mark.points(2)
def test_round_works_on_the_bits_not_by_conversion(lesson):
    calls = trace_ops(lambda: lesson.round_to_bfloat16(EVERY_CLASS))
    used = sorted({call.name for call in calls if torch.bfloat16 in call.outputs})
    if used:
        pytest.fail((
            f"round_to_bfloat16 created a bfloat16 tensor (in {', '.join(used)}): that lets torch "
            "do the rounding. This lesson asks you to round by hand: read the bits with x.view(torch.int32), "
            "round them with integer ops, and view the result as float32."
        ), pytrace=False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.complex64,
                                   torch.bool], ids=str)
def test_round_refuses_other_dtypes(lesson, dtype):
    x = torch.ones(2, 4, dtype=dtype)
    expect_raises(lambda: lesson.round_to_bfloat16(x), TypeError, what=f"round_to_bfloat16(x) for x of {describe(x)}",
                  why="the bit tricks assume float32's layout; say that float32 is expected.", mention=("float32",))


# --- float_limits ------------------------------------------------------------------------------


@pytest.mark.points(2)
@pytest.mark.parametrize(("dtype", "e", "m"), below("FORMATS"), ids=below("FORMAT_NAMES"))
def test_limits_match_finfo(lesson, dtype, e, m):
    info = torch.finfo(dtype)
    check_limits(limits_of(lesson, e, m, f" ({info.dtype})"), (info.max, info.eps, info.smallest_normal),
                 f"float_limits({e}, {m}) ({info.dtype})", f"torch.finfo({dtype})", e, m)


@given(st.integers(2, 6), st.integers(1, 10))
@example(6, 9)
@example(4, 3)  # float8_e4m3fn's widths: IEEE rules give max 240 (e4m3fn itself reaches 448)
@example(2, 1)
def test_limits_of_formats_torch_does_not_have(lesson, e, m):
    check_limits(limits_of(lesson, e, m, " (expected its limits, computed from the widths as for any format)"), brute_force_limits(e, m), f"float_limits({e}, {m})",
                 "decoding every bit pattern of that format", e, m)


def test_limits_at_the_ends_of_the_ranges(lesson):
    # The widths 2 and 11, 1 and 52 are all allowed ("2 to 11", "1 to 52"), and so is any mix of them.
    for e, m in [(2, 52), (11, 1), (2, 1), (11, 52), (3, 30), (9, 45), (10, 11), (7, 52)]:
        check_limits(limits_of(lesson, e, m, ", widths at the ends of the ranges (2 to 11 and 1 to 52 bits)"),
                     decoded_limits(e, m), f"float_limits({e}, {m})",
                     "decoding the bit patterns of the largest finite number, of 1 + eps and of the smallest normal",
                     e, m)


def test_limits_are_computed_not_looked_up(lesson):
    with reported("float_limits(e, m) for the widths of float32, float16, bfloat16, float64 and float8_e5m2, with "
                  "torch.finfo and numpy.finfo unavailable"):
        got = limits_without_finfo(lesson, [(e, m) for _, e, m in FORMATS])
    for (dtype, e, m), limits in zip(FORMATS, got):
        if isinstance(limits, dict):
            pytest.fail(f"float_limits({e}, {m}) called {limits['looked up']}: compute the limits from the bit "
                        "widths instead (a lookup knows only the formats torch or NumPy has)", pytrace=False)
        info = torch.finfo(dtype)
        check_limits(limits, (info.max, info.eps, info.smallest_normal), f"float_limits({e}, {m})", "torch.finfo")


@pytest.mark.parametrize(("args", "error"), [
    ((1, 7), ValueError), ((0, 7), ValueError), ((8, 0), ValueError), ((8, -1), ValueError),
    ((12, 10), ValueError), ((11, 53), ValueError), ((2, 53), ValueError), ((12, 1), ValueError),
    ((-3, 7), ValueError), ((8.0, 7), TypeError), ((8, 7.0), TypeError), ((8, "7"), TypeError),
    ((None, 7), TypeError),
], ids=["e1", "e0", "m0", "m-1", "e12", "m53", "e2-m53", "e12-m1", "e-3", "float-e", "float-m", "str-m", "none-e"])
def test_limits_refuse_bad_widths(lesson, args, error):
    why = ("the widths must be ints" if error is TypeError else
           "a format needs 2 to 11 exponent bits and 1 to 52 mantissa bits (1 exponent bit leaves no normal "
           "numbers; a wider format does not fit in a Python float)")
    expect_raises(lambda: lesson.float_limits(*args), error, what=f"float_limits{args!r}", why=why)


# --- sliding_windows ---------------------------------------------------------------------------


@given(st.deferred(lambda: windows_cases()))
@example((sequence(6, 2), 6, 1))  # size == len(x): one window, all of x
@example((sequence(6), 6, 4))  # and a step longer than what is left
@example((sequence(5, 3), 2, 7))  # a step longer than x: one window
@example((sequence(1), 1, 1))  # one element
@example((sequence(1, 3, layout="strided"), 1, 2))
@example((sequence(4, 0), 2, 1))  # no elements, yet 3 windows of shape (0, 2)
@example((sequence(7, 2, layout="expanded"), 3, 2))  # stride 0 along dim 0
@pytest.mark.points(2)
def test_windows_match_unfold(lesson, case):
    x, size, step = case
    what = (f"sliding_windows(x, {size}, {step}) for x of {describe(x)}, stride {x.stride()}, storage offset "
            f"{x.storage_offset()}")
    assert_windows(windows_of(lesson, x, size, step, what), x, size, step, what)


@pytest.mark.points(2)
@pytest.mark.parametrize("layout", ["x[3:]", "x[::2]", "x.t()", "x[2:, 1]"])
def test_windows_of_views(lesson, layout):
    base = torch.arange(40.0).reshape(10, 4)
    x = {"x[3:]": base[3:], "x[::2]": base[::2], "x.t()": base.t(), "x[2:, 1]": base[2:, 1]}[layout]
    what = (f"sliding_windows(x, 2, 1) for x = {layout.replace('x', 'base')}, base = torch.arange(40.).reshape(10, 4): "
            f"x has shape {tuple(x.shape)}, stride {x.stride()}, storage offset {x.storage_offset()}")
    assert_windows(windows_of(lesson, x, 2, 1, what), x, 2, 1, what)


def test_windows_of_any_dtype(lesson):
    for dtype in ANY_DTYPE:
        x = cast(np.linspace(-3, 3, 27).reshape(9, 3), dtype)
        for name, view in (("base[2:]", x[2:]), ("base[::2]", x[::2]), ("base.t()", x.t())):
            what = (f"sliding_windows(x, 2, 2) for x = {name}, base of {describe(x)}: x has shape "
                    f"{tuple(view.shape)}, stride {view.stride()}, storage offset {view.storage_offset()}")
            assert_windows(windows_of(lesson, view, 2, 2, what), view, 2, 2, what)


def test_windows_on_the_meta_device(lesson):
    # A view of x has x's device: on the meta device (shapes and strides, no data) the windows must be
    # the same view as unfold's, which code going through NumPy or a new tensor cannot be.
    base = on_meta(torch.empty(10, 4))
    views = {"base": lambda b: b, "base[3:]": lambda b: b[3:], "base.t()": lambda b: b.t(),
             "base[::2, 1]": lambda b: b[::2, 1], "base[:1].expand(6, 4)": lambda b: b[:1].expand(6, 4)}
    for layout, view in views.items():
        x = view(base)
        what = (f"sliding_windows(x, 3, 2) for x = {layout}, base = torch.empty(10, 4) on the meta device: x of shape "
                f"{tuple(x.shape)}")
        out = windows_of(lesson, x, 3, 2, what)
        want = x.unfold(0, 3, 2)
        got_view = (out.device, out.dtype, tuple(out.shape), out.stride(), out.storage_offset())
        want_view = (want.device, want.dtype, tuple(want.shape), want.stride(), want.storage_offset())
        if got_view == want_view:
            continue
        message = f"{what} gives {view_said(out, x)}; x.unfold(0, 3, 2) gives {view_said(want, x)}."
        if out.device == x.device and out.dtype == x.dtype and tuple(out.shape) != tuple(want.shape):
            # A view of x with the wrong shape: the shape's own pitfall (needs no data), or the plain comparison.
            pytest.fail(message + windows_pitfall(out, x, 3, 2), pytrace=False)
        if tuple(out.shape) == tuple(want.shape) and copies_on_the_cpu(lesson, view):
            fresh = " Those are the strides of a new tensor." if out.is_contiguous() else ""
            pytest.fail(f"{message}{fresh} It copied: the same call on a CPU x of this layout returns windows that "
                        "share nothing with x's storage. Build the windows as one view of x's own storage, strides "
                        "from x.stride() (no torch.stack, clone, contiguous or NumPy).", pytrace=False)
        pytest.fail(f"{message} Build the view on x itself with x.as_strided: strides from x.stride(), offset "
                    "x.storage_offset()", pytrace=False)


@pytest.mark.points(2)
def test_windows_see_writes_to_x(lesson):
    x = torch.arange(10.0)
    out = lesson.sliding_windows(x, 4, 2)
    x[5] = 100.0  # lies in window 1 (elements 2-5) at 3 and window 2 (elements 4-7) at 1
    seen = (out[1, 3].item(), out[2, 1].item())
    if seen != (100.0, 100.0):
        pytest.fail(f"after x[5] = 100.0, sliding_windows(x, 4, 2) shows {seen} at [1, 3] and [2, 1], not 100.0: the "
                    "windows are a copy. Make them a view of x's storage with as_strided.", pytrace=False)


def test_windows_do_not_call_unfold(lesson):
    x = torch.arange(12.0).reshape(6, 2)
    with forbid("torch.Tensor.unfold", what="sliding_windows(x, 3, 1)",
                why="write the view yourself with as_strided: the lesson is choosing the strides."):
        lesson.sliding_windows(x, 3, 1)


@pytest.mark.parametrize(("shape", "size", "step"), [((5,), 6, 1), ((0,), 1, 1), ((5,), 0, 1), ((5,), 2, 0),
                                                     ((5, 2), 2, -1), ((), 1, 1), ((5,), -1, 1), ((3, 4), 4, 1),
                                                     ((0, 2), 1, 1), ((), 0, 0)],
                         ids=["too-long", "empty", "size0", "step0", "step-1", "0-d", "size-1", "too-long-2d",
                              "empty-2d", "0-d-size0"])
def test_windows_refuse_bad_sizes(lesson, shape, size, step):
    x = torch.zeros(shape)
    expect_raises(lambda: lesson.sliding_windows(x, size, step), ValueError,
                  what=f"sliding_windows(x, {size}, {step}) for x of shape {shape}",
                  why="x needs a dim 0, size and step must be at least 1, and a window cannot be longer than x.")


# --- devices -----------------------------------------------------------------------------------


@pytest.mark.cuda
def test_runs_on_the_inputs_device(lesson):
    x = EVERY_CLASS.cuda()
    check_round(lesson, x, "round_to_bfloat16(x) for x on CUDA")
    y = torch.arange(20.0, device="cuda").reshape(10, 2)[1:]
    assert_windows(lesson.sliding_windows(y, 3, 2), y, 3, 2, "sliding_windows(x, 3, 2) for x on CUDA")


# --- the helpers, scenarios and tables the tests use ---------------------------------------------


def bits_of(t: torch.Tensor) -> torch.Tensor:
    """The int32 bit patterns of float32 `t`, flattened."""
    return t.reshape(-1).view(torch.int32)


def show(bits: int, value: float) -> str:
    """A float32 as its bits and its value, the value as Python writes a float (repr: 1.0, -0.0,
    1.00390625, 4.591774807899561e-41), the one float format of this lesson's messages."""
    return f"0x{bits & 0xFFFF_FFFF:08X} ({float(value)!r})"


TRUNCATION = ("these are x's bits with the low 16 cleared, which truncates (rounds toward zero): round to nearest "
              "instead, so the top half goes up by one when the low half is above 0x8000 (and on a tie, when bit 16 "
              "is 1)")
TRUNCATED = Pitfall(lambda x_bits: x_bits & -0x1_0000, TRUNCATION)


# Not a table of Pitfalls: it sorts the inputs into classes, whatever the learner's result.
def mistakes(x_bits: torch.Tensor, want: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor, str]]:
    """The classes of input a rounding by hand gets wrong, plainest first: (the class, the part of it
    that names the pitfall when every wrong element lies there, what it needs)."""
    magnitude, finite = x_bits & 0x7FFF_FFFF, (x_bits & 0x7F80_0000) != 0x7F80_0000
    zero, subnormal = magnitude == 0, ((x_bits & 0x7F80_0000) == 0) & (magnitude != 0)
    tie, to_inf = (x_bits & 0xFFFF) == 0x8000, finite & ((want & 0x7FFF_FFFF) == 0x7F80_0000)
    plain = ~(zero | subnormal | tie | to_inf)
    return [
        (plain, plain, "round to nearest: the low 16 bits decide whether the top half goes up by one (a low half "
                       "above 0x8000 rounds up, one below rounds down), then the low half is cleared"),
        (tie & ~subnormal, tie, "an exact tie (low half 0x8000) goes to the neighbour whose bit 16 is 0: ties to even "
                                "(not always up, not always down)"),
        (subnormal, subnormal, "a subnormal (exponent field 0) rounds on its bits like any other number: no "
                               "flushing to zero, and no float math (frexp/ldexp keeps 8 significant bits, more "
                               "than a bfloat16 subnormal has)"),
        (to_inf, to_inf, "a finite float this close to the largest one rounds up to inf, as round-to-nearest says: "
                         "the carry runs into the exponent (no clamping at the largest bfloat16)"),
        (zero, zero, "zero keeps its sign: -0.0 is 0x80000000 (no abs(), no comparison with 0 to put the sign back)"),
    ]


def diagnose_rounding(x_bits: torch.Tensor, got: torch.Tensor, want: torch.Tensor,
                      wrong: torch.Tensor) -> tuple[torch.Tensor, str]:
    """(the elements to show, why) for the non-NaN elements rounded wrong: the one class that holds
    them all, else truncation if that is what every one of them is, else the plainest class."""
    classes = mistakes(x_bits, want)
    for _, whole, why in (classes[2], classes[1], classes[3], classes[4]):  # a subnormal tie is a subnormal first
        if not (wrong & ~whole).any():
            return wrong, why
    if pitfall_of(got[wrong], want[wrong], [TRUNCATED], x_bits[wrong], match=torch.equal):
        return wrong, TRUNCATION
    for kind, _, why in classes:
        if (wrong & kind).any():
            return wrong & kind, why
    return wrong, classes[0][2]


OVERLAPPING = ("an in-place op wrote into x or a view of it (x.view(torch.int32) shares x's memory), and here x is "
               "expanded (stride 0): many of its elements are one memory location. Use out-of-place ops: the "
               "caller's x must not change.")


def check_round(lesson, x: torch.Tensor, what: str) -> torch.Tensor:
    """round_to_bfloat16(x) holds, bit for bit, x.to(torch.bfloat16).float() (NaNs: any NaN with low
    half 0), is a new float32 tensor of x's shape on x's device, and x is left as it was."""
    __tracebackhide__ = True
    before, expected = x.detach().clone(), x.detach().to(torch.bfloat16).float()  # before the call
    with reported(what), explained(what, when="more than one element of the written-to tensor refers to a single "
                                               "memory location", advice=OVERLAPPING):
        out = lesson.round_to_bfloat16(x)
    if not isinstance(out, torch.Tensor):
        raise AssertionError(f"{what} returned {type(out).__name__}, expected a torch.Tensor")
    if (out.dtype, out.shape, out.device) != (torch.float32, x.shape, x.device):
        raise AssertionError(f"{what} returned {describe(out)} on {out.device}; expected float32 of shape "
                             f"{tuple(x.shape)} on {x.device}, like x")
    changed = int((bits_of(x.detach()) != bits_of(before)).sum())
    if changed:
        raise AssertionError(f"{what} changed {changed} of {x.numel()} elements of the caller's x. "
                             "x.view(torch.int32) shares x's memory: an in-place op on it (+=, add_, "
                             "bitwise_and_, copy_) writes into x. Use out-of-place ops.")
    if out is x or (x.numel() and out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()):
        raise AssertionError(f"{what} returned a tensor that shares x's memory; it must return a new tensor "
                             "(writing to the result must not change x)")
    x_bits, got, want = bits_of(before), bits_of(out.detach()), bits_of(expected)
    nan = before.reshape(-1).isnan()
    wrong = ~nan & (got != want)
    nan_lost = nan & ~out.detach().reshape(-1).isnan()
    checks = [
        (nan_lost, "a NaN must stay a NaN: handle NaNs apart (find them with torch.isnan and give them NaN bits "
                   "whose low 16 bits are 0, any sign and payload), since rounding a NaN's bits like a number's "
                   "carries a payload that sits only in the low 16 bits into the exponent (inf), and one at the "
                   "top of the payload past the sign bit (0)"),
        diagnose_rounding(x_bits, got, want, wrong) if wrong.any() else (wrong, ""),
        ((got & 0xFFFF) != 0,
         "the low 16 bits of every output, NaNs too, must be 0: the result must be a bfloat16 value"),
    ]
    for bad, why in checks:
        if bad.any():
            index = bad.nonzero().flatten()[:8].tolist()
            lines = [f"  x = {show(x_bits[i].item(), before.reshape(-1)[i].item())} -> got "
                     f"{show(got[i].item(), out.reshape(-1)[i].item())}, expected "
                     + ("a NaN whose low 16 bits are 0 (any such NaN)" if nan[i] else
                        f"{show(want[i].item(), expected.reshape(-1)[i].item())} (torch's)") for i in index]
            count = int((wrong | nan_lost | (nan & ((got & 0xFFFF) != 0))).sum())
            raise AssertionError(f"{what}: {count} of {counted(x.numel(), 'element')} wrong. {why[0].upper()}{why[1:]}, "
                                 "for example:\n" + "\n".join(lines))
    return out


# Bit patterns of every class that a rounding by hand can get wrong.
CLASSES = {
    "exact ties": [0x3F80_8000, 0x3F81_8000, 0xBF80_8000, 0xBF81_8000, 0x0000_8000, 0x0001_8000,
                   0x8000_8000, 0x8001_8000, 0x7F00_8000, 0x7F01_8000, 0x4B7E_8000, 0x4B7F_8000],
    "just below and above a tie": [0x3F80_7FFF, 0x3F80_8001, 0x3F81_7FFF, 0x3F81_8001, 0xBF80_7FFF,
                                   0xBF80_8001, 0x3F80_FFFF, 0x3FFF_FFFF, 0x3F80_0001, 0xC07F_C000],
    "signed zeros": [0x0000_0000, 0x8000_0000],
    "subnormals": [0x0000_0001, 0x0000_7FFF, 0x0000_8001, 0x0001_0000, 0x0001_7FFF, 0x007F_7FFF,
                   0x007F_8000, 0x007F_FFFF, 0x8000_0001, 0x8000_7FFF, 0x8000_8001, 0x807F_FFFF],
    "the largest floats (which round to inf)": [0x7F7F_0000, 0x7F7E_8000, 0x7F7F_7FFF, 0x7F7F_8000,
                                                0x7F7F_8001, 0x7F7F_FFFF, 0xFF7F_7FFF, 0xFF7F_8000, 0xFF7F_FFFF],
    "infinities": [0x7F80_0000, 0xFF80_0000],
    "values bfloat16 holds exactly": [0x3F80_0000, 0x4049_0000, 0xC2F7_0000, 0x0080_0000, 0x8001_0000],
}
NANS = [0x7F80_0001, 0x7F80_0100, 0x7F80_7FFF, 0x7F80_8000, 0x7F80_FFFF, 0x7F81_0000, 0x7FBF_FFFF,
        0xFF80_0001, 0xFF80_FFFF, 0x7FC0_0000, 0x7FC0_0001, 0x7FFF_FFFF, 0xFFC0_0000, 0xFFFF_FFFF]
EVERY_CLASS = from_bits(*(p for patterns in CLASSES.values() for p in patterns), *NANS)


VIEWS = {
    "transposed": lambda base: with_layout(base, "transposed"),
    "strided": lambda base: with_layout(base, "strided"),
    "offset": lambda base: base[3:],
    "column": lambda base: base[1:, 2],
    "expanded rows": lambda base: base.reshape(-1)[None].expand(3, -1),
    "expanded columns": lambda base: base.reshape(-1)[:, None].expand(-1, 2),
    "requires grad": lambda base: base.clone().requires_grad_(),
}


FORMATS = [(torch.float32, 8, 23), (torch.float16, 5, 10), (torch.bfloat16, 8, 7), (torch.float64, 11, 52),
           (torch.float8_e5m2, 5, 2)]
FORMAT_NAMES = [dtype_name(dtype) for dtype, _, _ in FORMATS]  # test_limits_match_finfo's ids


def brute_force_limits(exponent_bits: int, mantissa_bits: int) -> tuple[float, float, float]:
    """Decode every positive normal number of the format and read the limits off the list."""
    bias = 2 ** (exponent_bits - 1) - 1
    fields = np.arange(1, 2**exponent_bits - 1)  # 0 holds the subnormals, all-ones inf and NaN
    fractions = np.arange(2**mantissa_bits) / 2**mantissa_bits
    values = ((1 + fractions[None, :]) * np.exp2(fields[:, None] - bias)).ravel()  # exact in float64 here
    return float(values.max()), float(values[values > 1].min() - 1), float(values.min())


def limits_pitfall(name: str, got: float, want: float, e: int, m: int) -> str:
    """Why `got` is wrong when it is exactly what a pitfall the lesson names gives, else ""."""
    told = pitfall_of(got, want, LIMITS_PITFALLS[name], want, e, m, match=operator.eq)
    return f" {told}" if told else ""


def bias(e: int) -> int:
    """The exponent bias of a format with e exponent bits, as IEEE sets it."""
    return 2 ** (e - 1) - 1


ALL_ONES = ("exponent field 2**e - 1 (all ones) holds inf and NaN in IEEE formats, so the largest finite number uses the "
            "field below it, worth 2**bias.")
POWER_OF_TWO = ("That is a power of two: the largest significand is 1.11...1 (every fraction bit set), which is 2 - eps, "
                "not 2 (or 1).")
# What each pitfall gives from (the right value, e, m), by the limit it gets wrong.
LIMITS_PITFALLS = {
    "max": [
        Pitfall(lambda want, e, m: 2 * want, "That overflowed to inf: twice the largest finite number, which a Python float "
                f"cannot hold: {ALL_ONES}", shows=lambda want, e, m: 2 * want == float("inf")),
        Pitfall(lambda want, e, m: 2 * want, f"That is twice the largest finite number: {ALL_ONES}"),
        Pitfall(lambda want, e, m: 2.0 ** (bias(e) + 1), POWER_OF_TWO),  # a significand of 2
        Pitfall(lambda want, e, m: 2.0 ** bias(e), POWER_OF_TWO),  # or of 1
    ],
    "eps": [
        Pitfall(lambda want, e, m: want / 2, "That is half of eps (the unit roundoff, the largest rounding error near 1): "
                "eps is the whole gap from 1.0 to the next float, one step of the last mantissa bit, 2**-m."),
    ],
    "smallest normal": [
        Pitfall(lambda want, e, m: want * 2.0**-m, "That is the smallest subnormal (exponent field 0, only the last fraction "
                "bit set): the smallest normal number has exponent field 1 and significand 1.0, which is 2**(1 - bias)."),
        Pitfall(lambda want, e, m: want / 2, "That is 2**-bias: exponent field 0 read as a normal number (field 0 holds zero "
                "and the subnormals, so the smallest normal uses field 1), or a bias one too large (bias = 2**(e - 1) - 1)."),
    ],
}


def limits_of(lesson, e: int, m: int, what: str = ""):
    """lesson.float_limits(e, m), an error told with the call and `what` (the inputs' story)."""
    __tracebackhide__ = True
    with reported(f"float_limits({e}, {m}){what}", advice=lambda exc: past_float64(exc, lesson)):
        return lesson.float_limits(e, m)


def past_float64(exc: BaseException, lesson) -> str:
    """Advice for reported(): an OverflowError, a value past the largest Python float; and where
    float32's widths show why (a max of 2.0 ** 128, a power of two), that pitfall too."""
    if not isinstance(exc, OverflowError):
        return ""
    advice = ("A Python float is a float64, so it stops at about 1.8e308: a step past that (2.0 ** 1024 for float64's "
              "own widths) overflows. The largest finite number is (2 - eps) * 2.0 ** bias, which fits: compute "
              "that, not a power of two above it.")
    try:
        float32_max = lesson.float_limits(8, 23)[0]
    except Exception:  # noqa: BLE001 (float32's own test tells its error)
        return advice
    if float32_max == 2.0**128:
        advice += (" Your float_limits(8, 23) gives max 2.0 ** 128 the same way: a power of two, where the largest "
                   "significand is 1.11...1 (every fraction bit set), 2 - eps, not 2.")
    return advice


def check_limits(got, expected, call: str, source: str, e: int | None = None, m: int | None = None) -> None:
    """`got` is a tuple of three Python floats equal to `expected`; e, m: the widths, to name a pitfall."""
    __tracebackhide__ = True
    if not (isinstance(got, tuple) and len(got) == 3):
        raise AssertionError(f"{call} returned {got!r}; expected a tuple (max, eps, smallest normal)")
    for name, g, want in zip(("max", "eps", "smallest normal"), got, expected):
        if type(g) is not float:
            raise AssertionError(f"{call}: {name} is {g!r} of type {type(g).__name__}; return plain Python floats "
                                 "(float arithmetic such as 2.0 ** k, not ints)")
        if g != want:
            why = limits_pitfall(name, g, want, e, m) if e is not None else ""
            raise AssertionError(f"{call}: {name} is {g!r}, {source} says {want!r}.{why}")


def decoded_limits(exponent_bits: int, mantissa_bits: int) -> tuple[float, float, float]:
    """The three limits decoded, exactly, from their bit patterns (for formats too wide to list)."""
    bias, m = 2 ** (exponent_bits - 1) - 1, mantissa_bits

    def value(field: int, fraction: int) -> float:  # (1 + fraction / 2**m) * 2**(field - bias)
        return float((1 + Fraction(fraction, 2**m)) * Fraction(2) ** (field - bias))

    largest = value(2**exponent_bits - 2, 2**m - 1)  # all-ones is inf/NaN: the field below, all mantissa bits
    return largest, value(bias, 1) - 1.0, value(1, 0)


class LookedUp(BaseException):
    """What torch.finfo and numpy.finfo raise while float_limits may not call them: not an
    Exception, so that no `except Exception` in the code under test swallows it."""


@beside
def limits_without_finfo(lesson, widths: list[tuple[int, int]]) -> list:
    """float_limits(e, m) for each of `widths`, with torch.finfo and numpy.finfo refusing: its
    limits, or {"looked up": "torch.finfo"} (or numpy.finfo) where it called one."""
    def refusing(name: str):
        def no_finfo(*args, **kwargs):
            raise LookedUp(name)
        return no_finfo

    found = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch, "finfo", refusing("torch.finfo"))
        patch.setattr(np, "finfo", refusing("numpy.finfo"))
        for e, m in widths:
            try:
                found.append(lesson.float_limits(e, m))
            except LookedUp as exc:
                found.append({"looked up": str(exc)})
    return found


OUT_OF_BOUNDS = ("the view asked of as_strided reaches past the end of x's storage. Its strides count storage "
                 "elements, not bytes (NumPy's strides count bytes), and come from x.stride(), not from x's shape; "
                 "check the window count W = (len(x) - size) // step + 1 too")


def windows_of(lesson, x: torch.Tensor, size: int, step: int, what: str):
    """lesson.sliding_windows(x, size, step), with as_strided's out-of-bounds error explained."""
    __tracebackhide__ = True
    with reported(what), explained(what, when="out of bounds for storage", advice=OUT_OF_BOUNDS):
        return lesson.sliding_windows(x, size, step)


def windows_pitfall(out: torch.Tensor, x: torch.Tensor, size: int, step: int) -> str:
    """Why `out` is not x.unfold(0, size, step) when it is exactly what a pitfall the lesson names gives
    (its shape, or where that is right its view of x's storage), else "" (the comparison with unfold
    then says how far off it is)."""
    want = x.unfold(0, size, step)
    if tuple(out.shape) != tuple(want.shape):
        told = pitfall_of(tuple(out.shape), tuple(want.shape), shape_pitfalls(x, size, step), x, size, step,
                          match=operator.eq)
    elif not x.numel() or out.dtype != x.dtype or out.device != x.device or torch.equal(out, want):
        return ""
    else:
        told = pitfall_of(out, want, view_pitfalls(x, size, step), x, size, step, match=torch.equal)
    return f" {told}" if told else ""


def window_count(x: torch.Tensor, size: int, step: int) -> int:
    """W, the number of windows of `size` every `step` that fit whole in x."""
    return (x.shape[0] - size) // step + 1


def shape_pitfalls(x: torch.Tensor, size: int, step: int) -> list[Pitfall]:
    """The shapes the lesson's pitfalls give the windows, told with x's numbers."""
    count, rest = window_count(x, size, step), tuple(x.shape[1:])
    return [
        Pitfall(lambda x, size, step: (window_count(x, size, step), size, *x.shape[1:]),
                f"Its shape {(count, size, *rest)} is (W, size, *x.shape[1:]): the window's own dim goes last, "
                f"(W, *x.shape[1:], size) = {(count, *rest, size)}, as unfold puts it."),
        *[Pitfall(lambda x, size, step, off=off: (window_count(x, size, step) + off, *x.shape[1:], size),
                  f"It has {count + off} windows, not W = (len(x) - size) // step + 1 = {count}: the first window "
                  "starts at 0, and trailing elements that fill no whole window are dropped.") for off in (-1, 1)],
    ]


def view_pitfalls(x: torch.Tensor, size: int, step: int) -> list[Pitfall]:
    """The views of x's storage the lesson's pitfalls give for the windows, told with x's numbers."""
    want, rest = x.unfold(0, size, step), tuple(x.shape[1:])
    row_major = [int(np.prod(rest[i + 1:], dtype=np.int64)) for i in range(len(rest))]
    along = int(np.prod(rest, dtype=np.int64))
    as_if_contiguous = (step * along, *row_major, along)
    in_bytes = tuple(stride * x.element_size() for stride in want.stride())
    return [
        Pitfall(lambda x, size, step: x.as_strided(want.shape, want.stride(), 0),
                f"These are the windows of x's storage from its start: x begins at storage offset {x.storage_offset()} "
                "(a slice), and a storage_offset passed to as_strided is absolute, so pass x.storage_offset() (or leave "
                "it out: as_strided keeps x's own).", shows=lambda x, size, step: x.storage_offset() != 0),
        Pitfall(lambda x, size, step: x.as_strided(want.shape, as_if_contiguous, x.storage_offset()),
                f"These are the windows x would have if it were contiguous: strides {as_if_contiguous} come from x's "
                f"shape, but x's own strides are {x.stride()} (x is not contiguous): as_strided counts storage "
                "elements, so build the strides from x.stride().",
                shows=lambda x, size, step: as_if_contiguous != tuple(want.stride())),
        Pitfall(lambda x, size, step: x.as_strided(want.shape, in_bytes, x.storage_offset()),
                f"These strides are in bytes ({x.element_size()} per {dtype_name(x.dtype)} element), as NumPy counts "
                "them: as_strided counts elements.", shows=lambda x, size, step: x.element_size() > 1),
    ]


def assert_windows(out, x: torch.Tensor, size: int, step: int, what: str) -> None:
    __tracebackhide__ = True
    if isinstance(out, torch.Tensor):
        why = windows_pitfall(out, x, size, step)
        if why:
            raise AssertionError(f"{what} is not x.unfold(0, {size}, {step}).{why}")
    assert_close(out, x.unfold(0, size, step), rtol=0, atol=0,
                 what=f"{what} (compared with x.unfold(0, {size}, {step}))")
    if x.numel() and out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr():
        raise AssertionError(
            f"{what} has the right values but does not share x's storage: it copied. Build the windows as one "
            "view of x's own storage (no torch.stack, clone, contiguous or NumPy)."
        )


@st.composite
def windows_cases(draw):
    length = draw(st.integers(1, 12))
    rest = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    dtype = draw(st.sampled_from([torch.float32, torch.int64, torch.float16, torch.bool, torch.bfloat16]))
    x = torch.arange(length * int(np.prod(rest, dtype=np.int64))).reshape(length, *rest).to(dtype)
    x = make_layout(x, draw(st.sampled_from(["contiguous", "strided", "transposed", "dim 0 innermost", "offset",
                                             "expanded", "expanded inner dim"])))
    return x, draw(st.integers(1, length)), draw(st.integers(1, 5))


def view_said(t: torch.Tensor, x: torch.Tensor) -> str:
    """"shape (4, 4, 3), stride (8, 1, 4), storage offset 0", with its dtype and device where they
    are not x's ("..., float64, on cpu")."""
    other = [dtype_name(t.dtype) if t.dtype != x.dtype else "", f"on {t.device}" if t.device != x.device else ""]
    elsewhere = "".join(f", {part}" for part in other if part)
    return f"shape {tuple(t.shape)}, stride {t.stride()}, storage offset {t.storage_offset()}{elsewhere}"


def copies_on_the_cpu(lesson, view) -> bool:
    """Whether sliding_windows(x, 3, 2) for x = view(base), base a (10, 4) CPU tensor, returns a
    tensor that shares nothing with x's storage."""
    x = view(torch.arange(40.0).reshape(10, 4))
    try:
        out = lesson.sliding_windows(x, 3, 2)
    except Exception:  # noqa: BLE001 (the meta device's failure is the one told)
        return False
    return isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()



CONTRACT = """Contract (lesson text, docstrings, hints -> the tests that check it; check_round, check_limits and
assert_windows run in every test of their function):
round_to_bfloat16
- "bit for bit x.to(torch.bfloat16).float() on every non-NaN float32" -> test_round_matches_torch_on_a_million_random_bit_patterns, test_round_matches_torch_on_tricky_classes
- "clearing the low half alone truncates", not what torch does -> check_round (named when every wrong element is the truncated input)
- "round to nearest, ties to even" (the hex examples) -> test_worked_examples_round_to_nearest_even, test_round_matches_torch_on_tricky_classes[exact ties]
- "every class of bit pattern included", "whatever its class", and the text's "where rounding by hand goes wrong"
  (the carry into the exponent and into inf, signed zeros, subnormals, infinities, the signed int32; check_round
  names each class when the wrong elements all lie in it) -> test_round_matches_torch_on_tricky_classes[signed zeros,
  subnormals, the largest floats..., infinities, just below and above a tie], test_round_matches_torch_on_a_million_random_bit_patterns
- "a NaN comes back as a NaN with its low 16 bits clear (any sign and payload)" (its payload may sit in the bits
  rounding throws away; which NaN is left open) -> test_nans_stay_nans, test_round_keeps_shape_and_layout (0-d NaNs)
- "elements are bfloat16 values (their low 16 bits are 0)" -> check_round, in every round test
- "any shape (0-d and empty too)" -> test_round_keeps_shape_and_layout (edge shapes, one element)
- "any strides and layout" (transposed, stepped, offset, expanded, requiring grad) -> test_round_of_a_view, test_round_keeps_shape_and_layout
- "x is not modified" (out-of-place ops only: the int32 view shares x's memory) -> test_round_does_not_modify_x, check_round
- "a new float32 tensor of x's shape on x's device" -> check_round, test_round_does_not_modify_x (writes to the result), test_runs_on_the_inputs_device (CUDA)
- "integer ops on x.view(torch.int32), no bfloat16 tensor created" -> test_round_works_on_the_bits_not_by_conversion
- "TypeError, naming float32, if x is not float32" -> test_round_refuses_other_dtypes
float_limits
- "(largest finite, eps, smallest normal)", "the results are Python floats" -> check_limits, in every limits test
- "equal to torch.finfo for float32, float16, bfloat16, float64, float8_e5m2" (and the table's float16 and bfloat16 rows) -> test_limits_match_finfo, test_float16_and_bfloat16_facts_from_the_table
- "the IEEE conventions of the lesson text: bias = 2**(e - 1) - 1, all-ones exponent reserved (e4m3fn differs)",
  "brute force for formats torch does not have" -> test_limits_of_formats_torch_does_not_have
- the pitfalls check_limits names when a value is exactly what they give: the all-ones exponent used for numbers,
  a significand of 2 (or 1) instead of 2 - eps, half of eps, the smallest subnormal or field 0 as the smallest normal
  -> test_limits_match_finfo, test_limits_of_formats_torch_does_not_have
- "exponent_bits 2 to 11, mantissa_bits 1 to 52", "every width in range (both ends too)" -> test_limits_at_the_ends_of_the_ranges
- "computed, not looked up" -> test_limits_are_computed_not_looked_up (torch.finfo and numpy.finfo)
- "TypeError for widths that are not ints (8.0, "7", None), ValueError for widths out of range" -> test_limits_refuse_bad_widths
sliding_windows
- "returns what x.unfold(0, size, step) returns", shape (W, *rest, size), "one entry per window that fits whole",
  "trailing elements dropped" -> test_windows_match_unfold, test_windows_of_a_short_sequence
  (assert_windows names a window dim in the wrong place and a count off by one)
- "any dims" (windows along dim 0; size == len, step > len, one element, empty rest dims) -> test_windows_match_unfold
- "any dtype" -> test_windows_of_any_dtype, test_windows_match_unfold
- "any strides and storage offset" (sliced, stepped, transposed, expanded) -> test_windows_of_views, test_windows_match_unfold
- "a stride counts elements of the whole storage" (elements, not bytes), "a storage_offset is a position in the
  storage", "numbers worked out from the shape read the wrong elements" -> assert_windows names strides computed
  from x's shape, byte strides and offset 0 (with the fix), in test_windows_of_views, test_windows_match_unfold and
  test_windows_of_any_dtype
- "a view: shares x's storage, a write to x shows in it" -> assert_windows, test_windows_see_writes_to_x
- "made with as_strided (unfold is not allowed)" -> test_windows_do_not_call_unfold, test_windows_on_the_meta_device
- the view lives on x's device -> test_windows_on_the_meta_device, test_runs_on_the_inputs_device (CUDA)
- "ValueError if x is 0-d, size < 1, step < 1 or size > len(x)" -> test_windows_refuse_bad_sizes
- "never write through it" -> advice to the caller, nothing the function does
Explanations with no function behind them (the defaults of torch.ones/torch.tensor, NumPy sharing
memory, .contiguous(), the diagonal example; hint 2's "as_strided keeps x's own offset when none is passed":
a learner who leaves it out passes like one who passes x.storage_offset()) are not graded.
"""
