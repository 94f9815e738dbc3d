"""What the learner's code runs at PyTorch's dispatcher: forbidden built-ins, loops, dtypes.

Caught below every Python spelling: ``torch.softmax``, ``F.softmax``, ``x.softmax``,
``nn.Softmax`` and ``torch.special.softmax`` all run the same ``aten._softmax``, so an alias or
a method call cannot slip through; and a matmul under autocast shows the dtype it really ran in.
"""

from __future__ import annotations

import ast
import linecache
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Iterator, Mapping

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from grader import running
from grader.testing.compare import counted
from grader.testing.errors import reported
from grader.testing.source import looped, normalise, spelled

# Public name -> the aten ops it runs (every alias and method spelling runs the same ones).
BUILTINS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "torch.softmax": ("aten._softmax", "aten._safe_softmax"),
        "torch.nn.functional.softmin": ("aten._softmax",),  # softmax of -x: the same op (the red team's, round 4)
        "torch.nn.functional.gumbel_softmax": ("aten._softmax",),
        "torch.nn.Softmax2d": ("aten._softmax",),  # (the red team's, round 5)
        # attention's fused kernels, which hold a softmax (the red team's, round 6)
        "torch.nn.functional.scaled_dot_product_attention": tuple(
            f"aten._scaled_dot_product_{kernel}"
            for kernel in ("flash_attention_for_cpu", "flash_attention", "efficient_attention", "cudnn_attention")
        ),
        "torch.nn.MultiheadAttention": ("aten._softmax", "aten._native_multi_head_attention"),
        **{
            f"torch.nn.{layer}": ("aten._transformer_encoder_layer_fwd",)  # (the red team's, round 7)
            for layer in ("TransformerEncoderLayer", "TransformerEncoder", "Transformer")
        },
        "torch.sparse.softmax": ("aten._sparse_softmax",),
        "torch.sparse.log_softmax": ("aten._sparse_log_softmax",),
        "torch.log_softmax": ("aten._log_softmax",),
        "torch.logsumexp": ("aten.logsumexp", "aten.logcumsumexp"),  # logcumsumexp's last entry is one
        "torch.distributions.Categorical": ("aten.logsumexp",),  # (normalises its logits so)
        "torch.nn.functional.cross_entropy": ("aten._log_softmax", "aten.nll_loss_forward", "aten.nll_loss2d_forward"),
        "torch.gather": ("aten.gather",),
        "torch.Tensor.unfold": ("aten.unfold",),
    }
)


@dataclass(frozen=True)
class OpCall:
    """One aten op as the dispatcher ran it, e.g. OpCall("aten.mm", (bfloat16, bfloat16), (bfloat16,))."""

    name: str
    inputs: tuple[torch.dtype, ...]  # the dtypes of its tensor arguments, in order
    outputs: tuple[torch.dtype, ...]  # the dtypes of the tensors it returned


def _dtypes(tree) -> tuple[torch.dtype, ...]:
    return tuple(leaf.dtype for leaf in tree_flatten(tree)[0] if isinstance(leaf, torch.Tensor))


class _Listed:
    """A mode that is in the running test's list of its kind (`listed`, an attribute of
    grader.running.RunningTest) while it is open: code under test in another process
    (grader.remote) runs where no dispatch mode of this one sees it, so its ops are handed to
    these (`take`). Outside a test, and in the code's process, which runs none, a mode is in
    no list: no recorder there is reachable to strike what it recorded."""

    listed: str

    def __enter__(self):
        test = running.current()
        self._listed_in = getattr(test, self.listed) if test is not None else None
        if self._listed_in is not None:
            self._listed_in.append(self)
        return super().__enter__()

    def __exit__(self, *exc):
        if self._listed_in is not None:
            self._listed_in.remove(self)
        return super().__exit__(*exc)


def __getattr__(name: str) -> tuple:
    """`OPEN` and `FUNCTIONS_OPEN`: the running test's recorders open now, innermost last (a
    copy; empty outside a test). Public names the red team's attacks reach for
    (grader/tests/hostile), kept so their measured results stay what they were."""
    lists = {"OPEN": "ops_recorders", "FUNCTIONS_OPEN": "function_recorders"}
    if name not in lists:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    test = running.current()
    return tuple(getattr(test, lists[name])) if test is not None else ()


class _Recorder(_Listed, TorchDispatchMode):
    listed = "ops_recorders"

    def __init__(self, *, dtypes: bool = True, forbidden: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.calls: list[OpCall] = []
        self.names: set[str] = set()
        self.dtypes = dtypes  # keep each call with its dtypes, or only the ops' names (cheaper)
        # Ops the block must not run; where another process ran the code and none of them showed,
        # the source of what it called there is read for them (`_read_sources`).
        self.forbidden = forbidden
        self.called: set[tuple[tuple[Path, ...], str]] = set()  # (the module's files, the function), called there
        # Tensor subclasses whose own __torch_dispatch__ took an op: what they run under it, this
        # mode (popped while it runs the op) does not see.
        self.subclasses: set[str] = set()

    @property
    def judges(self) -> bool:
        """Whether a test's verdict may rest on what this records: ops it forbids, or every call
        kept (count_ops, trace_ops), where a set of names only (ops_run without `forbidding`)
        serves advice on a failure."""
        return bool(self.forbidden) or self.dtypes

    def take(self, calls: list[OpCall], called: tuple[tuple[Path, ...], str] | None = None) -> None:
        """Ops another process ran for this one, as if they had run here, in a call of `called`."""
        self.names.update(call.name for call in calls)
        if self.dtypes:
            self.calls.extend(calls)
        if called is not None:
            self.called.add(called)

    def __exit__(self, *exc):
        done = super().__exit__(*exc)
        if self.forbidden and self.called and exc[0] is None and not self.forbidden & self.names:
            _read_sources(self.called, self.forbidden)
        return done

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise torch wraps __torch_dispatch__ in a "dynamo disable" that imports
        # torch._dynamo on the first op recorded (more than the rest of most lessons cost,
        # docs/PERFORMANCE.md section 1);
        # nothing this records runs under torch.compile.
        return False

    @property
    def ops(self) -> Counter[str]:
        return Counter(call.name for call in self.calls)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.subclasses.update(t.__qualname__ for t in types if t is not torch.Tensor)
        out = func(*args, **kwargs)
        name = str(func.overloadpacket)
        self.names.add(name)
        if self.dtypes:
            self._record(name, (args, kwargs), out)
        return out

    def _record(self, op: str, inputs, out) -> None:
        self.calls.append(OpCall(op, _dtypes(inputs), _dtypes(out)))


# The same for torch's Python functions (`functions_called`): what a dispatch mode cannot tell
# apart, such as F.normalize and the same division written out, which run the same aten ops.
class _FunctionRecorder(_Listed, TorchFunctionMode):
    listed = "function_recorders"

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def take(self, names: list[str]) -> None:
        """Functions another process called for this one, as if they had been called here."""
        self.names.update(names)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(function_name(func))
        return func(*args, **(kwargs or {}))


def function_name(func) -> str:
    """A torch function's public name, e.g. "torch.nn.functional.normalize"."""
    return f"{getattr(func, '__module__', None) or '?'}.{getattr(func, '__qualname__', None) or getattr(func, '__name__', '?')}"


@contextmanager
def functions_called() -> Iterator[set[str]]:
    """The names (`function_name`) of the torch functions called inside the block, whatever
    name the caller gave them (``F.normalize``, ``from torch.nn.functional import normalize``):
    a set filled as they are called."""
    recorder = _FunctionRecorder()
    with recorder:
        yield recorder.names


def spellings(ops: Iterable[str]) -> frozenset[str]:
    """The Python names (grader.testing.source.normalise'd) that reach any of the aten `ops`:
    each op's own name (``aten._log_softmax``: log_softmax) and the public names in BUILTINS
    that run it (torch.nn.functional.cross_entropy)."""
    words = set()
    for op in ops:
        words.add(op.removeprefix("aten.").removesuffix("_forward"))
        words.update(name.rsplit(".", 1)[1] for name, run in BUILTINS.items() if op in run)
    return frozenset(normalise(word) for word in words)


def _read_sources(called: set[tuple[tuple[Path, ...], str]], forbidden: frozenset[str]) -> None:
    """Read the source of the functions another process `called` for spellings of the
    `forbidden` ops, none of which it ran that anyone saw; note each function that names one,
    for a person to read (grader.running.note_review)."""
    words = spellings(forbidden)
    _note_sources(
        called,
        lambda files, function: spelled(files, [function], words),
        "names a built-in its test forbids ({where}) that its run did not show: hidden from the check, "
        "or in a branch the test did not reach",
    )


def _note_sources(called: set[tuple[tuple[Path, ...], str]], find, finding: str) -> None:
    """Note, for a person to read (grader.running.note_review), each function another
    process `called` in whose source `find(files, function)` finds something (Spellings):
    "the source of FUNCTION " and `finding`, its "{where}" filled with the first three."""
    for files, function in sorted(called):
        if found := find(files, function):
            where = ", ".join(f"{Path(s.file).name}:{s.line} {s.word}" for s in found[:3])
            running.note_review(f"the source of {function} " + finding.format(where=where))


def lines_naming(lesson, function: str, ops: Iterable[str]) -> list[str]:
    """The learner's lines in whose source `function` (or what it reaches by name) names a
    built-in that runs one of the aten `ops`, as a traceback shows them ("exercises/07_stable/
    stable.py:12: in logsumexp" and the line). None where the spelling is not in the source
    (built by name at run time): the op count caught it anyway."""
    files = getattr(lesson, "_kata_sources", None)  # a module in another process: its files
    if files is None:  # here: the module's file, and a mutant's, whose definitions replace its own
        own = [
            f.__code__.co_filename
            for f in vars(lesson).values()
            if getattr(f, "__module__", None) == lesson.__name__ and hasattr(f, "__code__")
        ]
        files = dict.fromkeys([lesson.__file__, *own])
    shown = []
    for found in spelled([Path(f) for f in files if f], [function], spellings(ops)):
        line = linecache.getline(found.file, found.line).strip()
        if line:
            shown.append(f"{_relative(found.file)}:{found.line}: in {_defined_in(found.file, found.line)}\n    {line}")
    return list(dict.fromkeys(shown))


def _defined_in(file: str, line: int) -> str:
    """The name of the innermost function of `file` around `line` ("<module>" outside any)."""
    around = [
        node
        for node in ast.walk(ast.parse("".join(linecache.getlines(file))))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno
    ]
    return max(around, key=lambda node: node.lineno).name if around else "<module>"


def _relative(file: str) -> str:
    """`file` as the learner's run names it: from the folder they ran it in, where it is below."""
    try:
        return str(Path(file).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return file


@contextmanager
def forbid(*names: str, what: str, why: str):
    """Fail if the code in the block runs any of the built-ins `names` (keys of BUILTINS).

    `what` names the learner's call; `why` says what the lesson asks for instead.
    """
    __tracebackhide__ = True
    unknown = [n for n in names if n not in BUILTINS]
    if unknown:
        raise ValueError(f"forbid() does not know {unknown}; add them to grader.testing.forbid.BUILTINS")
    recorder = _Recorder(forbidden=frozenset(op for n in names for op in BUILTINS[n]))
    with recorder:
        yield
    used = [n for n in names if set(BUILTINS[n]) & recorder.ops.keys()]
    if used:
        raise AssertionError(
            f"{what} calls {' or '.join(used)} (or an alias of it), which this lesson asks you to write yourself: {why}"
        )


@contextmanager
def ops_run(forbidding: Iterable[str] = ()) -> Iterator[set[str]]:
    """The names of the aten ops run inside the block, e.g. ``{"aten.exp", "aten.sum"}``: a set
    filled as they run (no dtypes kept: cheap enough to wrap every call a test makes).

    `forbidding`: ops the caller fails the block for; where the code under test ran in another
    process and showed none of them, its source is read for them too (grader.testing.source)."""
    recorder = _Recorder(dtypes=False, forbidden=frozenset(forbidding))
    with recorder:
        yield recorder.names


def count_ops(fn: Callable[[], object]) -> Counter[str]:
    """How many times `fn()` runs each aten op, e.g. ``Counter({"aten.select": 500, ...})``.

    A deterministic sign of a Python loop over a tensor: the count grows with the input's
    size, where vectorised code runs the same few ops at any size. Unlike a timing, it does not
    move with the load on the machine.
    """
    return Counter(call.name for call in trace_ops(fn))


def trace_ops(fn: Callable[[], object]) -> list[OpCall]:
    """Every aten op `fn()` runs, in order, with the dtypes going in and out.

    E.g. the dtypes a model's matmuls ran in under autocast::

        [d for call in trace_ops(step) if call.name in ("aten.mm", "aten.addmm") for d in call.inputs]

    or whether code let torch do a conversion it was asked to write by hand::

        [call.name for call in trace_ops(fn) if torch.bfloat16 in call.outputs]
    """
    return _traced(fn).calls


def _traced(fn: Callable[[], object]) -> _Recorder:
    """The recorder that watched `fn()`: its ops, and what another process called for it."""
    recorder = _Recorder()
    with recorder:
        fn()
    return recorder


def assert_no_loop(
    call_at: Callable[[int], Callable[[], object]], small: int, big: int, *, what: str, unit: str, hint: str
) -> None:
    """Fail if the code runs an aten op more often at size `big` than at size `small`, one it ran
    at size `small` too: a loop repeats its body's ops. An op that only appears at the bigger size
    is a method chosen by size (torch.cdist switches to a matrix product past 25 points), not a loop.

    `call_at(n)` builds the inputs for size n and returns the call to count, so building them
    is not counted. Vectorised code runs the same ops at any size; a Python loop over `unit`
    (rows, points, ...) runs some of them once per item. `hint` says how to batch instead.
    `what` names the call, e.g. "pairwise_sq_dist(x, y)"; an error the call raises fails the
    test with it and the size (grader.testing.errors.reported).
    """
    __tracebackhide__ = True
    recorders = []
    for n in (small, big):
        with reported(f"{what} for {n} {unit}"):
            recorders.append(_traced(call_at(n)))
    ops_small, ops_big = (recorder.ops for recorder in recorders)
    grew = sorted(op for op in ops_big if ops_big[op] > ops_small[op] > 0)
    if grew:
        raise AssertionError(
            f"{what} ran {counted(sum(ops_small.values()), 'tensor op')} for {small} {unit} but "
            f"{sum(ops_big.values())} for {big} ({', '.join(f'{op}: {ops_small[op]} -> {ops_big[op]}' for op in grew)}): "
            f"the sign of a Python loop over the {unit}. {hint}"
        )
    # Ops another process ran are what it reported, which its code could change: where it ran
    # the calls, the source of what they called is read for a loop too.
    _read_loops(recorders[0].called | recorders[1].called, unit)


def _read_loops(called: set[tuple[tuple[Path, ...], str]], unit: str) -> None:
    """Note each function another process `called` whose source, or what it reaches by name,
    loops in Python, for a person to read (grader.running.note_review): the ops it
    reported did not grow with the input, and a loop there may be over something else."""
    _note_sources(
        called,
        lambda files, function: looped(files, [function]),
        f"loops in Python ({{where}}), where its run showed no loop over the {unit}: hidden from the "
        "count, or a loop over something else",
    )
