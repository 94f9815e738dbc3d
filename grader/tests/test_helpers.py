"""The shared test helpers in grader.testing: each one must be able to fail."""

import re
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings

from grader import running
from grader.hypothesis_profile import examples_a_test
from grader.testing import (
    assert_close,
    assert_defaults,
    assert_speed,
    count_ops,
    describe,
    expect_raises,
    forbid,
    grad_of,
    mismatch,
    speed_ratio,
    trace_ops,
)
from grader.testing.memory import MiB, allocations, format_allocations
from grader.testing.strategies import tensor_and_dim, tensors
from grader.tests.kits import ROOT

SOFTMAX_SPELLINGS = {
    "torch.softmax": lambda x: torch.softmax(x, -1),
    "F.softmax": lambda x: F.softmax(x, -1),
    "Tensor.softmax": lambda x: x.softmax(-1),
    "nn.Softmax": lambda x: torch.nn.Softmax(dim=-1)(x),
    "torch.special.softmax": lambda x: torch.special.softmax(x, -1),
}


@pytest.mark.parametrize("spelling", SOFTMAX_SPELLINGS)
def test_forbid_catches_every_spelling_of_softmax(spelling):
    x = torch.randn(2, 3, requires_grad=True)
    with pytest.raises(AssertionError, match=r"my_softmax calls torch\.softmax .*exp and sum"):
        with forbid("torch.softmax", what="my_softmax", why="use exp and sum"):
            SOFTMAX_SPELLINGS[spelling](x)


def test_forbid_names_the_builtin_that_ran():
    x = torch.randn(2, 3)
    with pytest.raises(AssertionError, match="calls torch.nn.functional.cross_entropy"):
        with forbid("torch.softmax", "torch.nn.functional.cross_entropy", what="loss", why="by hand"):
            F.cross_entropy(x, torch.tensor([0, 2]))
    with pytest.raises(AssertionError, match="calls torch.logsumexp"):
        with forbid("torch.logsumexp", what="lse", why="by hand"):
            torch.special.logsumexp(x, -1)


def test_forbid_allows_everything_else():
    x = torch.randn(2, 3)
    with forbid("torch.softmax", "torch.log_softmax", "torch.logsumexp", what="f", why="-"):
        e = torch.exp(x - x.amax(-1, keepdim=True))
        (e / e.sum(-1, keepdim=True)).log()


def test_forbid_rejects_unknown_names():
    with pytest.raises(ValueError, match="does not know"):
        with forbid("torch.no_such_thing", what="f", why="-"):
            pass


def test_assert_defaults_compares_the_call_that_leaves_an_argument_out_with_the_one_that_gives_it():
    x = torch.ones(2, 3, 4)

    def total(x, dim=-1):
        return x.sum(dim)

    def total_over_1(x, dim=1):
        return x.sum(dim)

    def place(location="cpu"):
        return location

    assert_defaults(lambda **dim: total(x, **dim), what="total(x)", dim=-1)
    assert_defaults(lambda **location: place(**location), what="place()", location="cpu")
    with pytest.raises(
        pytest.fail.Exception,
        match=r"(?s)total_over_1\(x\), which leaves out dim=-1, against the same "
        r"call with dim=-1 given:.*shape.*the default the docstring's signature states \(dim=-1\)",
    ):
        assert_defaults(lambda **dim: total_over_1(x, **dim), what="total_over_1(x)", dim=-1)
    with pytest.raises(
        pytest.fail.Exception, match=r"place\(\), which leaves out location='cuda'.*: 'cpu' instead of 'cuda'"
    ):
        assert_defaults(lambda **location: place(**location), what="place()", location="cuda")


READ_SOURCE = """\
import torch
import torch.nn as nn
from torch.nn.functional import relu, softmax as s


def softmax(x):  # the learner's own: a name, not the built-in
    if x.numel() == 0:
        raise ValueError("softmax of nothing")  # words in a string are not a call
    return relu(x)


def by_import(x):
    return s(x, -1)


def by_helper(x):
    return _helper(x)


def _helper(x):
    return getattr(torch, "log_softmax")(x, -1)


def by_module(x, y):
    return nn.CrossEntropyLoss()(x, y)


def by_alias(x):
    return torch.special.logsumexp(x, -1)


_bound = torch.Tensor.softmax


def by_binding(x):
    return _bound(x, -1)
"""


# Every function's reading includes what the module's import-time code names (line 32's binding
# of torch.Tensor.softmax runs at import, as a thread started there would).
@pytest.mark.parametrize(
    ("function", "found"),
    [
        ("softmax", [(32, "softmax")]),
        ("by_import", [(3, "softmax"), (32, "softmax")]),
        ("by_helper", [(21, "log_softmax"), (32, "softmax")]),
        ("by_module", [(25, "CrossEntropyLoss"), (32, "softmax")]),
        ("by_alias", [(29, "logsumexp"), (32, "softmax")]),
        ("by_binding", [(32, "softmax")]),
    ],
)
def test_the_source_check_finds_each_spelling_a_function_reaches(tmp_path, function, found):
    from grader.testing.forbid import BUILTINS, spellings
    from grader.testing.source import spelled

    (tmp_path / "m.py").write_text(READ_SOURCE)
    words = spellings(
        [
            op
            for name in ("torch.softmax", "torch.log_softmax", "torch.logsumexp", "torch.nn.functional.cross_entropy")
            for op in BUILTINS[name]
        ]
    )
    assert [(s.line, s.word) for s in spelled([tmp_path / "m.py"], [function], words)] == found


def test_the_source_check_reads_what_import_time_code_reaches(tmp_path):
    """A worker thread started at import runs what it names, whichever function the tests call
    (the red team's, 2026-11-29: a queue served by a thread that calls torch.softmax)."""
    from grader.testing.source import spelled

    (tmp_path / "m.py").write_text(
        "import threading\nimport torch\n\n\ndef _w():\n    return torch.softmax\n\n\n"
        "threading.Thread(target=_w).start()\n\n\ndef stable_softmax(x):\n    return x\n"
    )
    assert [(s.line, s.word) for s in spelled([tmp_path / "m.py"], ["stable_softmax"], frozenset({"softmax"}))] == [
        (6, "softmax")
    ]


def test_the_source_check_reads_a_later_files_definitions_over_an_earlier_ones(tmp_path):
    from grader.testing.source import spelled

    (tmp_path / "a.py").write_text("import torch\ndef f(x):\n    return x.unfold(0, 2, 1)\n")
    (tmp_path / "b.py").write_text("def f(x):\n    return x\n")
    assert spelled([tmp_path / "a.py"], ["f"], frozenset({"unfold"}))
    assert not spelled([tmp_path / "a.py", tmp_path / "b.py"], ["f"], frozenset({"unfold"}))
    (tmp_path / "c.py").write_text("def f(:\n")  # a file that does not parse adds nothing
    assert not spelled([tmp_path / "c.py"], ["f"], frozenset({"unfold"}))


def test_a_forbidden_built_in_is_shown_at_the_learners_line_in_the_function_that_spells_it(tmp_path, monkeypatch):
    import importlib.util

    from grader.testing.forbid import BUILTINS, lines_naming

    (tmp_path / "stable.py").write_text(
        "import torch\n\n\ndef logsumexp(x, dim=-1):\n"
        "    return torch.special.logsumexp(x, dim)\n\n\n"
        "def xent(labels, logits, dim=-1):\n    return logsumexp(logits, dim) - labels\n"
    )
    spec = importlib.util.spec_from_file_location("stable_for_test", tmp_path / "stable.py")
    lesson = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lesson)
    monkeypatch.chdir(tmp_path)  # named as the learner's run names it: from where it ran
    shown = ["stable.py:5: in logsumexp\n    return torch.special.logsumexp(x, dim)"]
    assert lines_naming(lesson, "xent", BUILTINS["torch.logsumexp"]) == shown  # reached by name
    assert lines_naming(lesson, "xent", BUILTINS["torch.softmax"]) == []


# A lesson's honest code, which the check of what reaches past it must leave alone.
HONEST = """
import os
import sys
from pathlib import Path

import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, sizes, activation=nn.ReLU):
        super().__init__()
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            setattr(self, f"layer{i}", nn.Linear(a, b))
        self.act = getattr(nn, "Tanh")()

    def forward(self, x):
        for m in self.modules():
            pass
        print(len(sys.argv), file=sys.stderr)
        return getattr(self, "layer0")(x)
"""


@pytest.mark.parametrize(
    ("code", "word"),
    [
        ("import sys\nf = sys._getframe()\n", "_getframe"),
        ("import grader.testing.memory as m\n", "grader.testing.memory"),
        ("from threading import Thread\n", "threading"),
        ("import sys as s\nx = s.modules['grader']\n", "modules"),
        ("from sys import modules\n", "modules"),
        ("def f(x):\n    return x.__globals__\n", "__globals__"),
        ("import torch\ntorch.finfo = None\n", "torch.finfo ="),
        ("import torch.nn.functional as F\nsetattr(F, 'relu', abs)\n", "setattr(F, ...)"),
        ("import torch\nf = getattr(torch, 'soft' + 'max')\n", "getattr(torch, <a name built at run time>)"),
        ("exec('1')\n", "exec()"),
        # The red team's, 2026-11-28: torch's guards that switch off the recording modes, a built-in
        # looked up by a name built at run time, the grader's server imported through __builtins__.
        ("import torch\nwith torch._C._DisableTorchDispatch():\n    pass\n", "_C"),
        ("from torch._C import DisableTorchFunction\n", "torch._C"),
        ("from torch.utils._python_dispatch import TorchDispatchMode\n", "torch.utils._python_dispatch"),
        ("from torch.overrides import TorchFunctionMode\n", "TorchFunctionMode"),
        ("import torch\nf = vars(torch)['soft' + 'max']\n", "vars()"),
        ("import torch\nf = torch.__dict__['softmax']\n", "__dict__"),
        ("s = __builtins__['__import__']('grader.remote.server')\n", "__builtins__"),
        # The red team's, 2026-11-29: modules reached as another module's attributes (no import
        # statement names them), getattr handed on to map or reduce (no call of it shows its names).
        (
            "import torch\n_pool = torch.utils.data.dataloader\n_pool.threading.Thread(target=print).start()\n",
            "threading",
        ),
        ("import torch\n_mods = torch.serialization.sys.modules\n", "sys"),
        ("import torch\nf = next(map(getattr, [torch], ['soft' + 'max']))\n", "getattr (handed on)"),
        # The red team's, round 5: sys imported as torch's attribute, the grader named in a string.
        ("from torch import sys as _sys\nm = _sys.modules\n", "sys"),
        ("import sys as s\nf = s.modules.get('grader.testing.forbid')\n", "'grader.testing.forbid'"),
        # The rest of the fixed list that docs/INSTRUCTORS.md names.
        *[(f"import {name}\n", name) for name in ("inspect", "gc", "ctypes", "importlib", "pytest")],
        ("def f(frame):\n    return frame.f_back\n", "f_back"),
        ("def f(g):\n    return g.__code__\n", "__code__"),
        ("x = eval('1')\n", "eval()"),
    ],
)
def test_the_source_check_finds_what_reaches_past_the_code(tmp_path, code, word):
    from grader.testing.source import reaching

    (tmp_path / "m.py").write_text(code)
    assert word in [s.word for s in reaching([tmp_path / "m.py"])]


@pytest.mark.parametrize(
    ("code", "word"),
    [
        # Read by allowlist where the lesson's answer is at hand (here 07's): what it does not need.
        ("import asyncio\n", "import asyncio"),  # a worker thread by another name: asyncio.to_thread
        ("from operator import attrgetter\n", "from operator import"),
        ("import torch\nt = torch\nt.is_autocast_enabled = lambda: True\n", "t.is_autocast_enabled ="),
        ("def f(x):\n    x.data = x.data * 0\n    return x\n", "x.data ="),
        ("import torch\nv = torch.ones(1)._version\n", "_version"),
        ("def f(m, name):\n    return getattr(m, name)\n", "getattr(<a name built at run time>)"),
        # The red team's, 2026-11-29: setattr on an object from a lookup, a torch module the answer never uses.
        ("import torch\n_mods = torch.serialization.modules\n", "torch.serialization (not in the answer)"),
        ("def f(o):\n    setattr(o['server'], '_ops', None)\n", "setattr(...)"),
        # The red team's, round 4: a tensor subclass whose own dispatch runs ops unseen, a timed call
        # told by /proc/self/maps and an input's address.
        ("import torch\nclass T(torch.Tensor):\n    pass\n", "a torch.Tensor subclass"),
        ("class M:\n    def __torch_function__(self, *args):\n        pass\n", "__torch_function__"),
        ("def f(x):\n    return x.as_subclass(object)\n", "as_subclass"),
        ("def f():\n    return open('/proc/self/maps')\n", "open"),
        ("def f(x):\n    return id(x)\n", "id"),
        ("def f(x):\n    return memoryview(x)\n", "memoryview"),
        ("from torch.utils.data import dataloader\n", "torch.utils.data.dataloader (not in the answer)"),
        # ... and through a module's alias inside a function, two at once (the lie told only while a call runs)
        ("import torch\n_t = torch\ndef f():\n    _t.is_autocast_enabled, _t.x = g, h\n", "_t.is_autocast_enabled ="),
    ],
)
def test_the_source_check_reads_what_the_answer_does_not_need_by_allowlist(tmp_path, code, word):
    from grader.testing.source import reaching

    (tmp_path / "m.py").write_text(code)
    answer = sorted((Path(__file__).resolve().parents[2] / "solutions" / "07_stable").glob("*.py"))
    assert word in [s.word for s in reaching([tmp_path / "m.py"], answer)]
    assert word not in [s.word for s in reaching([tmp_path / "m.py"])]  # without an answer: the fixed list only


@pytest.mark.parametrize(
    "code",
    [
        # 03's answer has `from torch import nn`: torch.nn spelled out is the same module, and the
        # modules that are always allowed (typing, collections.abc) are allowed by any name.
        "import torch\nlayer = torch.nn.Linear(2, 3)\n",
        "import collections.abc\nimport typing\nx: typing.Any = collections.abc.Sequence\n",
        "import torch\ndef norm(x):\n    return torch.linalg.vector_norm(x, dim=-1)\n",  # a public namespace
    ],
)
def test_the_source_check_leaves_alone_what_the_answer_reaches_by_another_name(tmp_path, code):
    from grader.testing.source import reaching

    (tmp_path / "m.py").write_text(code)
    answer = sorted((Path(__file__).resolve().parents[2] / "solutions" / "03_broadcast").glob("*.py"))
    assert reaching([tmp_path / "m.py"], answer) == []


def test_each_lessons_answer_and_stub_need_nothing_beyond_the_answer():
    from grader.testing.source import reaching

    root = Path(__file__).resolve().parents[2]
    for lesson in sorted(p.name for p in (root / "solutions").iterdir() if p.is_dir() and p.name[:2].isdigit()):
        answer = sorted((root / "solutions" / lesson).glob("*.py"))
        assert reaching(answer, answer) == [], lesson
        assert reaching(sorted((root / "exercises" / lesson).glob("*.py")), answer) == [], lesson


def test_the_source_check_of_what_reaches_past_the_code_leaves_honest_code_and_the_kits_answers_alone(tmp_path):
    from grader.testing.source import reaching

    (tmp_path / "m.py").write_text(HONEST)
    answers = sorted((Path(__file__).resolve().parents[2] / "solutions").glob("*/*.py"))
    assert answers and reaching([tmp_path / "m.py", *answers]) == []


def test_assert_close_says_what_was_called_and_by_how_much():
    with pytest.raises(
        AssertionError,
        match=r"^f\(x\) for x of shape \(2,\):\nvalues that differ: 1 of 2; the worst is at index \(1,\)",
    ):
        assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]), what="f(x) for x of shape (2,)")
    with pytest.raises(AssertionError, match="did the function forget to `return`"):
        assert_close(None, torch.tensor([1.0]), what="f(x)")
    with pytest.raises(AssertionError, match="got float32; expected float16"):
        assert_close(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float16))
    assert_close(torch.tensor([float("nan")]), torch.tensor([float("nan")]))  # nan matches nan


_NAN, _INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("actual", "expected", "told"),
    [
        (
            torch.tensor(0.6931),
            torch.tensor(1000.6931),
            "got 0.6931; expected 1000.69 (off by 1000.0; allowed 0.0013).",
        ),
        (1.0, 2.0, "got 1.0; expected 2.0 (off by 1.0; allowed 1.3e-05)."),
        (
            torch.tensor([1.0, 2.0]),
            torch.tensor([1.0, 3.0]),
            "values that differ: 1 of 2; the worst is at index (1,): got 2.0, expected 3.0 (off by 1.0; allowed 1.4e-05).",
        ),
        (
            torch.tensor([[0.0, _NAN], [1.0, 9.0]]),
            torch.tensor([[0.5, 0.25], [1.0, 2.0]]),  # a NaN before a larger gap
            "values that differ: 3 of 4; the worst is at index (0, 1): got nan, expected 0.25.",
        ),
        (
            torch.tensor([_INF, 1.0]),
            torch.tensor([2.0, 1.0]),
            "values that differ: 1 of 2; the worst is at index (0,): got inf, expected 2.0.",
        ),
        (
            torch.tensor([1, 2]),
            torch.tensor([1, 3]),
            "values that differ: 1 of 2; the worst is at index (1,): got 2, expected 3 (off by 1).",
        ),
        (torch.tensor([True]), torch.tensor([False]), "got True; expected False."),
        # below 1e6 every digit before the point: 10000.69 is the shift plus log 2, not "1e+04" or "10001"
        (
            torch.tensor([0.6931, 0.0]),
            torch.tensor([10000.6931, 0.0]),
            "values that differ: 1 of 2; the worst is at index (0,): got 0.6931, expected 10000.69 (off by 10000.0; allowed 0.013).",
        ),
        (
            torch.tensor(3.0),
            torch.tensor(196608.0),
            "got 3.0; expected 196608.0 (off by 196605.0; allowed 0.26).",
        ),  # 3 * 65536
        # from 1e6 up, an exponent, as in every other message (not 116876008.0 beside 1.0486e+06)
        (
            torch.tensor(-116876008.0, dtype=torch.float64),
            torch.tensor(-0.0058252, dtype=torch.float64),
            "got -1.1688e+08; expected -0.0058252 (off by 1.1688e+08; allowed 1e-07).",
        ),
        # the same digits before the point: as many after it, so the digits compare column by column
        (
            torch.tensor(1.582, dtype=torch.float64),
            torch.tensor(1.5817, dtype=torch.float64),
            "got 1.5820; expected 1.5817 (off by 0.0003; allowed 2.6e-07).",
        ),
        # digits enough that the values shown differ by about what "off by" says
        (
            torch.tensor(-0.13333325, dtype=torch.float64),
            torch.tensor(-0.1333335, dtype=torch.float64),
            "got -0.13333325; expected -0.13333350 (off by 2.5e-07; allowed 1.1e-07).",
        ),
        (torch.ones(4, 4), torch.ones(4), "got shape (4, 4); expected shape (4,)."),
        (torch.ones(2), torch.ones(2, dtype=torch.float16), "got float32; expected float16."),
        (1, 2.0, "got 1 (int); expected 2.0 (float)."),
        (torch.tensor([1.0000001]), torch.tensor([1.0]), None),  # within float32's tolerance
    ],
    ids=[
        "scalar",
        "number",
        "one of two",
        "nan first",
        "inf",
        "int",
        "bool",
        "large",
        "whole",
        "exponent",
        "aligned",
        "close digits",
        "shape",
        "dtype",
        "type",
        "close",
    ],
)
def test_assert_close_says_which_side_is_the_learners_and_the_worst_element(actual, expected, told):
    """One float format for values and tolerances, the learner's value first, named as theirs:
    torch's "Tensor-likes are not close!" block never reaches the learner."""
    assert mismatch(actual, expected, what="f(x)") == (None if told is None else f"f(x):\n{told}")


def test_assert_close_names_the_item_and_the_keys_in_its_own_words():
    with pytest.raises(AssertionError, match=r"^the parameters, at 0\.weight:\nvalues that differ: 2 of 2") as info:
        assert_close({"0.weight": torch.ones(2)}, {"0.weight": torch.zeros(2)}, what="the parameters")
    assert "failure occurred" not in str(info.value)
    with pytest.raises(AssertionError, match=r"^the optimizer state, at param 0 exp_avg:\ngot 1.0; expected 0.0"):
        assert_close(
            {"param 0 exp_avg": torch.ones(1, 1)}, {"param 0 exp_avg": torch.zeros(1, 1)}, what="the optimizer state"
        )
    with pytest.raises(AssertionError, match=r"^the parameters, at model\[0\]\.bias:\n"):  # brackets in a key
        assert_close({"model[0].bias": torch.ones(1)}, {"model[0].bias": torch.zeros(1)}, what="the parameters")
    with pytest.raises(AssertionError, match=r"^the state, at item 1:\n"):
        assert_close([torch.ones(1), torch.ones(1)], [torch.ones(1), torch.zeros(1)], what="the state")
    # torch adds no msg to a mismatch of keys: the kit names the call, and leaves out an empty list.
    with pytest.raises(AssertionError, match=r"^the optimizer state:\ngot keys not expected: \['param 3 step'\]$"):
        assert_close(
            {"a": torch.ones(1), "param 3 step": torch.ones(1)}, {"a": torch.ones(1)}, what="the optimizer state"
        )
    with pytest.raises(AssertionError, match=r"^s:\ngot keys not expected: \['a'\]; keys missing: \['b'\]$"):
        assert_close({"a": torch.ones(1)}, {"b": torch.ones(1)}, what="s")


def test_grad_of_says_when_the_graph_was_cut():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert_close(grad_of((x * x).sum(), x, "x*x"), torch.tensor([2.0, 4.0]))
    with pytest.raises(AssertionError, match=r"^f\(x\): the result does not track gradients"):
        grad_of((x * x).detach(), x, "f(x)")


def test_count_ops_grows_with_a_python_loop_only():
    def loop(x):
        return sum(x[i] for i in range(x.shape[0]))

    small, large = torch.rand(5, 3), torch.rand(50, 3)
    assert count_ops(lambda: loop(large))["aten.select"] == 50
    assert count_ops(lambda: large.sum(0)) == count_ops(lambda: small.sum(0))


def test_trace_ops_sees_the_dtype_autocast_ran_a_matmul_in():
    x, w = torch.ones(4, 3), torch.ones(3, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        calls = trace_ops(lambda: x @ w + 1)
    mm = [call for call in calls if call.name == "aten.mm"]
    assert len(mm) == 1 and mm[0].inputs == (torch.bfloat16, torch.bfloat16) and mm[0].outputs == (torch.bfloat16,)
    assert [call.name for call in calls if torch.float32 in call.inputs] == ["aten._to_copy"] * 2  # x and w cast down
    plain = trace_ops(lambda: x.view(torch.int32).to(torch.bfloat16))
    assert [call.name for call in plain if torch.bfloat16 in call.outputs] == ["aten._to_copy"]


def test_allocations_see_a_tiled_copy_but_not_a_broadcast_view():
    b = torch.rand(64, 1, 256)
    tiled = allocations(lambda: b.repeat(1, 128, 1))
    assert tiled[0].nbytes == 8 * MiB, format_allocations(tiled)
    assert all(a.nbytes < MiB for a in allocations(lambda: b.expand(64, 128, 256)))
    assert format_allocations([]) == "nothing"


def test_expect_raises_returns_the_exception_or_says_what_is_missing():
    def refuse():
        raise ValueError("sizes must have two entries")

    assert isinstance(expect_raises(refuse, ValueError, what="f()", why="-", mention=("sizes",)), ValueError)
    with pytest.raises(
        pytest.fail.Exception, match=r"^f\(\) returned 3 without an error; expected a ValueError: no\.$"
    ):
        expect_raises(lambda: 3, ValueError, what="f()", why="no.")
    with pytest.raises(pytest.fail.Exception, match=r"say what is wrong: name steps in the message"):
        expect_raises(refuse, ValueError, what="f()", why="-", mention=("steps",))
    with pytest.raises(NotImplementedError):  # a stub's TODO passes through untouched
        expect_raises(lambda: (_ for _ in ()).throw(NotImplementedError), ValueError, what="f()", why="-")
    with pytest.raises(NotImplementedError):  # a subclass of RuntimeError, still a TODO
        expect_raises(lambda: (_ for _ in ()).throw(NotImplementedError), RuntimeError, what="f()", why="-")


def test_a_call_that_should_raise_names_what_it_returned_without_a_wall_of_numbers():
    with pytest.raises(
        pytest.fail.Exception, match=r"^f\(\) returned tensor\(2\.\) without an error; expected a Value"
    ):
        expect_raises(lambda: torch.tensor(2.0, requires_grad=True), ValueError, what="f()", why="-")
    with pytest.raises(
        pytest.fail.Exception,
        match=r"^f\(\) returned a tensor of shape \(2, 1\), float32 without an error; "
        r"expected an IndexError",
    ):
        expect_raises(lambda: torch.full((2, 1), 2.0), IndexError, what="f()", why="-")
    with pytest.raises(pytest.fail.Exception, match=r"^f\(\) returned a tensor of shape \(6, 10, 3\), uint8 without"):
        expect_raises(lambda: torch.zeros(6, 10, 3, dtype=torch.uint8), ValueError, what="f()", why="-")


@pytest.mark.parametrize(
    "text, told",
    [
        ("plain words", "plain words"),
        # a library's page: the first line, cut where it opens a list
        (
            "where() received an invalid combination of arguments - got (bool), but expected one of:\n * (Tensor condition)",
            "where() received an invalid combination of arguments - got (bool), but expected one of ...",
        ),
        # terminal colour codes stripped
        (
            "Weights only load failed. \x1b[1mdo those steps only if you trust the source\x1b[0m",
            "Weights only load failed. do those steps only if you trust the source",
        ),
        # autograd's advice on debugging tools is not the learner's mistake
        (
            "is at version 3; expected version 2 instead. Hint: enable anomaly detection to find the operation",
            "is at version 3; expected version 2 instead.",
        ),
        # a long line: cut at a word, and said to be cut
        ("word " * 60, ("word " * 40).strip() + " ..."),
        # or, where a sentence ends in reach, after it
        (
            "The register_meta function raises unimplemented by default. " + "More words follow here. " * 9,
            "The register_meta function raises unimplemented by default." + " More words follow here." * 5,
        ),
    ],
)
def test_an_error_is_quoted_as_the_line_a_learner_reads(text, told):
    from grader.quoting import SHOWN, error_line, quoted

    assert quoted(RuntimeError(text)) == f"RuntimeError({told!r})"
    assert error_line(RuntimeError(text)) == f"RuntimeError: {told}"
    assert len(told) <= SHOWN + 4
    assert error_line(KeyError()) == "KeyError"
    assert (
        error_line(AssertionError("assert 0 == 5\n+  where 0 = f()"))
        == "AssertionError: assert 0 == 5\n+  where 0 = f()"
    )
    assert quoted(KeyError(140391677792208)) == "KeyError(140391677792208)"  # a key as the code used it
    assert quoted(KeyError("a")) == "KeyError('a')"


def test_an_error_is_quoted_as_raised_where_the_code_ran():
    """A DataLoader worker's error, re-raised in the main process, is quoted by the worker's own
    message, not torch's account of where it was caught; a type outside the builtins is named
    with its module; an OpenCV check without OpenCV's version and source path."""
    from grader.quoting import quoted

    class error(Exception):  # as cv2.error is named
        pass

    error.__module__, error.__qualname__ = "cv2", "error"
    opencv = (
        "OpenCV(5.0.0) /io/opencv/modules/imgproc/src/color.cpp:199: error: (-215:Assertion failed) "
        "!_src.empty() in function 'cvtColor'\n"
    )
    assert quoted(error(opencv)) == "cv2.error(\"(-215:Assertion failed) !_src.empty() in function 'cvtColor'\")"
    caught = (
        "Caught {name} in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
        '  File "/x/torch/utils/data/_utils/fetch.py", line 54, in fetch\n'
        "    data = [self.dataset[idx] for idx in possibly_batched_index]\n"
        "            ~~~~~~~~~~~~^^^^^\n"
        '  File "/x/data.py", line 8, in __getitem__\n'
        "    raise OSError(f'could not read {{path}}')\n"
        "{line}\n"
    )
    assert (
        quoted(OSError(caught.format(name="OSError", line="OSError: could not read b.png")))
        == "OSError('could not read b.png')"
    )
    assert (
        quoted(error(caught.format(name="error", line="cv2.error: " + opencv)))
        == "cv2.error(\"(-215:Assertion failed) !_src.empty() in function 'cvtColor'\")"
    )
    assert quoted(OSError(caught.format(name="OSError", line="OSError: two\nlines"))) == "OSError('two ...')"
    assert (
        quoted(ValueError("Caught nothing: a message of its own"))
        == "ValueError('Caught nothing: a message of its own')"
    )

    class _ArrayMemoryError(MemoryError):  # NumPy's, in a private module: named by its public base
        pass

    _ArrayMemoryError.__module__ = "numpy._core._exceptions"
    assert quoted(_ArrayMemoryError("Unable to allocate 1.00 TiB")) == "MemoryError('Unable to allocate 1.00 TiB')"


def test_expect_raises_tells_the_lessons_diagnosis_and_what_came_back():
    import numpy as np

    from grader.testing.errors import returned

    def wrong():
        raise ValueError("negative stride")

    with pytest.raises(
        pytest.fail.Exception,
        match=r"^f\(\) raised ValueError\('negative stride'\); expected an "
        r"OSError\.\nThe pitfall\.$",
    ):
        expect_raises(wrong, OSError, what="f()", why="why.", advice=lambda exc: "The pitfall.")
    with pytest.raises(pytest.fail.Exception, match=r"expected an OSError\.$"):
        expect_raises(wrong, OSError, what="f()", why="why.", advice=lambda exc: "")
    with pytest.raises(pytest.fail.Exception, match=r"expected an OSError: why\.$"):
        expect_raises(wrong, OSError, what="f()", why="why.", advice=lambda exc: None)
    with pytest.raises(
        pytest.fail.Exception, match=r"^f\(\) gave 1 image without an error; expected an OSError: why\.$"
    ):
        expect_raises(lambda: [0], OSError, what="f()", why="why.", told=lambda result: "gave 1 image")
    assert returned([torch.zeros(6, 10, 3)] * 2) == "a list of 2 items"
    assert returned([1, 2]) == "[1, 2]"
    assert returned(np.zeros((6, 10, 3), np.uint8)) == "a NumPy array of shape (6, 10, 3), uint8"


def test_a_gradient_is_named_by_the_argument_the_call_gives_it():
    from grader.testing.differential import assert_same_as

    def wrong_for_weights(x, w):  # the right values; the gradient for w twice as large
        return x * w.detach() + (w - w.detach()) * 2 * x

    logits, weights = torch.randn(3, 4), torch.rand(3, 4)
    with pytest.raises(AssertionError, match=r"with respect to weights \(got: yours"):
        assert_same_as(
            wrong_for_weights,
            lambda x, w: x * w,
            logits,
            weights,
            what="scaled(logits, weights) for logits of shape (3, 4)",
            grads=True,
        )
    with pytest.raises(AssertionError, match=r"with respect to argument 2 \(got: yours"):
        assert_same_as(
            wrong_for_weights, lambda x, w: x * w, logits, weights, what="scaled(logits, torch.rand(3, 4))", grads=True
        )
    only_weights = partial(wrong_for_weights, logits)  # the call lists two; one is given here: no name is read from it
    with pytest.raises(AssertionError, match=r"with respect to argument 1 \(got: yours"):
        assert_same_as(only_weights, lambda w: logits * w, weights, what="scaled(logits, weights)", grads=True)
    with pytest.raises(AssertionError, match=r"with respect to weights \(got: yours"):
        assert_same_as(
            only_weights, lambda w: logits * w, weights, what="scaled(logits, weights)", grads=True, names=("weights",)
        )


def test_describe():
    assert describe(torch.zeros(3, 4)) == "shape (3, 4), float32"
    assert describe(torch.zeros(3, 4, dtype=torch.bfloat16).t()) == "shape (4, 3), bfloat16, non-contiguous"


def test_speed_ratio_tells_fast_from_slow_and_restores_threads():
    threads = torch.get_num_threads()
    ratio = speed_ratio(lambda: time.sleep(0.004), lambda: None, repeats=3)
    assert ratio > 10
    assert torch.get_num_threads() == threads


def test_a_ratio_is_said_plainly():
    from grader.testing.speed import plainly

    assert plainly(0.97) == plainly(1.04) == "ran about as fast as"  # never "1.0x slower"
    assert plainly(3.24) == "ran 3.2 times as fast as"
    assert plainly(0.4) == "took 2.5 times as long as"


def test_assert_speed_prints_the_measured_ratio_and_records_it():
    test = running.RunningTest("a test")  # the running test's context, as the plugin sets it
    token = running.TEST.set(test)
    try:
        with pytest.raises(
            AssertionError,
            match=r"slow_fn is too slow: it took \d+\.\d times as long as a no-op; it must take at most 2 times as long as a no-op",
        ):
            assert_speed(
                lambda: None,
                lambda: time.sleep(0.003),
                at_least=0.5,
                what="slow_fn",
                baseline_name="a no-op",
                repeats=3,
            )
    finally:
        running.TEST.reset(token)
    (measured,) = test.measurements
    assert measured["what"] == "slow_fn" and measured["ratio"] < 0.5


@given(tensors(masked=True, dtypes=(torch.float32, torch.bfloat16)))
def test_tensors_strategy_gives_float_tensors_of_the_asked_dtypes(t):
    assert t.dtype in (torch.float32, torch.bfloat16)
    assert 1 <= t.dim() <= 4


def test_tensors_strategy_reaches_the_adversarial_cases():
    seen = set()

    @given(tensor_and_dim(masked=True, dtypes=(torch.float32, torch.float16)))
    def collect(case):
        t, dim = case
        assert -t.dim() <= dim < t.dim()
        if not t.is_contiguous():
            seen.add("non-contiguous")
        if t.dtype == torch.float16:
            seen.add("float16")
        if torch.isneginf(t).any():
            seen.add("-inf")
        if t.dim() and torch.isneginf(t).all(-1).any():
            seen.add("fully masked row")
        if t.abs().max() >= 1e3:
            seen.add("huge")

    collect()
    assert seen == {"non-contiguous", "float16", "-inf", "fully masked row", "huge"}


def test_kata_examples_sets_the_examples_a_test_and_a_bad_value_says_how_to_fix_it():
    assert examples_a_test({}) == 25
    assert settings.get_profile("kata").max_examples == examples_a_test()
    assert examples_a_test({"KATA_EXAMPLES": "200"}) == 200
    for bad in ("", "0", "-3", "2.5", "many", "²"):
        with pytest.raises(ValueError, match=rf"KATA_EXAMPLES={bad!r} is not a number.*KATA_EXAMPLES=25"):
            examples_a_test({"KATA_EXAMPLES": bad})


@pytest.mark.skipif(not torch.distributed.is_available(), reason="this torch has no torch.distributed, so no DTensor")
def test_assert_close_keeps_torchs_dtensor_rule_once_dtensors_exist():
    # The kit's assert_close skips torch's DTensor check while no DTensor can exist. A learner's
    # process that goes on to make DTensors must still get torch's rule, from torch's own
    # assert_close and from the kit's: a DTensor against a plain tensor is ambiguous, so a
    # TypeError, and two DTensors compare by value. A fresh process, so that the kit's
    # assert_close runs first, before anything imported torch.distributed.tensor.
    code = (
        "import torch\n"
        "from grader.testing import assert_close\n"
        "assert_close(torch.ones(2), torch.ones(2), what='ones')\n"
        "try:\n"
        "    assert_close(torch.ones(2), torch.zeros(2), what='ones')\n"
        "except AssertionError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('assert_close accepted different tensors')\n"
        "import torch.distributed as dist\n"
        "from torch.distributed.tensor import DeviceMesh, Replicate, distribute_tensor\n"
        "dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)\n"
        "mesh = DeviceMesh('cpu', [0])\n"
        "d = distribute_tensor(torch.ones(2), mesh, [Replicate()])\n"
        "for name, check in (('torch', torch.testing.assert_close), ('kit', assert_close)):\n"
        "    check(d, distribute_tensor(torch.ones(2), mesh, [Replicate()]))\n"
        "    try:\n"
        "        check(d, torch.ones(2))\n"
        "    except TypeError as e:\n"
        "        print(name, 'TypeError:', e)\n"
        "    except BaseException as e:\n"
        "        print(name, type(e).__name__ + ':', str(e).splitlines()[0])\n"
        "    else:\n"
        "        print(name, 'accepted a DTensor against a plain tensor')\n"
        "dist.destroy_process_group()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["torch TypeError", "kit TypeError"], done.stdout + done.stderr
    assert all("Comparing a DTensor to a non-DTensor is ambiguous" in line for line in lines), done.stdout


def test_assert_close_explains_a_failure_only_when_the_explanation_matches():
    with pytest.raises(AssertionError, match=r"^f\(x\):\nvalues that differ: 2 of 2.*\nThe pitfall: its fix\.$"):
        assert_close(torch.ones(2), torch.zeros(2), what="f(x)", explain=lambda: "The pitfall: its fix.")
    with pytest.raises(AssertionError) as plain:
        assert_close(torch.ones(2), torch.zeros(2), what="f(x)", explain=lambda: "")  # not that pitfall's signature
    assert str(plain.value).endswith("(off by 1.0; allowed 1e-05).")
    assert_close(torch.ones(2), torch.ones(2), explain=lambda: pytest.fail("explain runs only on a failure"))


def test_explained_turns_the_named_error_into_advice_and_lets_others_through():
    from grader.testing import explained

    with pytest.raises(AssertionError, match=r"f\(x\) raised ValueError\('bad shape \(3,\)'\): squeeze it"):
        with explained("f(x)", when="bad shape", advice="squeeze it", exc_type=(ValueError, UserWarning)):
            raise ValueError("bad shape (3,)")
    with pytest.raises(ValueError, match="other"):
        with explained("f(x)", when="bad shape", advice="squeeze it", exc_type=ValueError):
            raise ValueError("other")
    with pytest.raises(NotImplementedError):  # a stub's TODO stays a TODO
        with explained("f(x)", when="", advice="-", exc_type=Exception):
            raise NotImplementedError


def test_the_default_device_is_blamed_only_for_an_error_it_causes():
    from grader.testing.differential import on_another_default_device

    x = torch.ones(3)
    with pytest.raises(pytest.fail.Exception, match="while torch's default device was 'meta'.*Fix it"):
        on_another_default_device(lambda: x + torch.zeros(3), what="f(x)", fix="Fix it.")
    with pytest.raises(pytest.fail.Exception, match=r"^f\(x\) raised RuntimeError\('The size of tensor a"):
        # wrong everywhere: its own error, told with the call
        on_another_default_device(lambda: x + torch.ones(3, device="cpu")[:2], what="f(x)", fix="Fix it.")
    assert on_another_default_device(lambda: x * 2, what="f(x)", fix="-").device.type == "cpu"


def test_a_pitfalls_signature_is_compared_as_data():
    from grader.testing import fail, raises_the_same, same

    assert same(torch.ones(2), torch.ones(2)) and not same(torch.ones(2), torch.zeros(2))
    assert mismatch(torch.ones(2), torch.ones(2), what="f(x)") is None
    assert mismatch(torch.ones(2), torch.zeros(2), what="f(x)").startswith("f(x):\nvalues that differ: 2 of 2")
    assert raises_the_same(lambda: torch.ones(2) + torch.ones(3), _error_of(lambda: torch.ones(2) + torch.ones(3)))
    assert not raises_the_same(lambda: torch.ones(2) + torch.ones(2), ValueError("x"))
    with pytest.raises(pytest.fail.Exception, match="^the message$") as failed:
        fail("the message")
    assert failed.value.pytrace is False


def _error_of(call) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 (whatever it raises is what the test compares)
        return exc
    raise AssertionError("no error")


LEARNERS_CODE = """\
import torch


def first_size(x):
    return x.shape[0]


def todo(x):
    raise NotImplementedError


def half_distance(x):
    return torch.cdist(x, x)
"""


def _learners_module(tmp_path):
    import importlib.util

    path = tmp_path / "stable.py"
    path.write_text(LEARNERS_CODE)
    spec = importlib.util.spec_from_file_location("learners_stable", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def test_reported_names_the_call_its_input_and_the_learners_lines_only(tmp_path):
    from grader.testing import reported

    learner, path = _learners_module(tmp_path)
    x = torch.tensor(2.5)
    with pytest.raises(pytest.fail.Exception) as failed:
        with reported(f"first_size(x) for x of {describe(x)}"):
            learner.first_size(x)
    assert str(failed.value) == (
        f"first_size(x) for x of shape (), float32 raised IndexError('tuple index out of "
        f"range'):\n{path}:5: in first_size\n    return x.shape[0]"
    )
    assert failed.value.pytrace is False and failed.value.__suppress_context__  # no chained banner
    # torch's "not implemented for 'Half'" is the learner's error like any other, told the same way
    with pytest.raises(pytest.fail.Exception, match=r"^half_distance\(x\) raised NotImplementedError\(.*Half"):
        with reported("half_distance(x)"):
            learner.half_distance(torch.ones(2, 2, dtype=torch.half))


def test_reported_lets_through_what_the_kit_tells_by_its_kind(tmp_path):
    from grader.testing import reported

    learner, _ = _learners_module(tmp_path)
    with pytest.raises(NotImplementedError):  # a stub's TODO stays a TODO
        with reported("todo(x)"):
            learner.todo(torch.ones(1))
    with pytest.raises(AssertionError, match="the test's own"):
        with reported("f(x)"):
            raise AssertionError("the test's own")
    with pytest.raises(AttributeError):  # a name missing from the learner's module
        with reported("f(x)"):
            learner.no_such_function  # the lookup itself raises
    with reported("f(x)"):
        pass  # no error: nothing to tell


def test_fail_leaves_out_the_error_being_handled():
    from grader.testing import fail

    with pytest.raises(pytest.fail.Exception) as failed:
        try:
            raise ValueError("inner")
        except ValueError:
            fail("the kit's words")
    assert failed.value.__suppress_context__ and failed.value.__cause__ is None


def test_counted_says_one_thing_or_many():
    from grader.testing import counted

    assert [counted(n, "shard") for n in (0, 1, 2)] == ["0 shards", "1 shard", "2 shards"]
    assert counted(1, "index", "indices") == "1 index" and counted(3, "index", "indices") == "3 indices"


def test_assert_same_as_starts_each_message_with_the_call_as_given():
    from grader.testing.differential import assert_same_as

    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    what = f"my_softmax(x, dim=0) for x of {describe(x)}"
    with pytest.raises(AssertionError) as values:
        assert_same_as(lambda t: torch.softmax(t, 1), lambda t: torch.softmax(t, 0), x, what=what)
    assert str(values.value).startswith(f"{what}:\nvalues that differ: 4 of 4")  # nothing appended to the call

    def right_values_wrong_gradient(t):  # right values, a wrong gradient whose plain sum (0) is softmax's
        centred = t - t.mean(0, keepdim=True)
        return torch.softmax(t.detach(), 0) + centred - centred.detach()

    softmax = partial(torch.softmax, dim=0)
    assert_same_as(right_values_wrong_gradient, softmax, x, what=what, grads=True)  # the plain sum agrees
    with pytest.raises(
        AssertionError,
        match=rf"^the gradient of {re.escape(what)}, its entries weighted from 0.5 "
        r"to 2.0 and summed, with respect to x \(got: yours",
    ):
        assert_same_as(right_values_wrong_gradient, softmax, x, what=what, grads=True, weighted=True)
    with pytest.raises(pytest.fail.Exception, match=rf"^{re.escape(what)} raised IndexError\("):
        assert_same_as(lambda t: t[5], lambda t: t, x, what=what)


def test_assert_no_loop_tells_an_error_with_the_size_that_raised_it_and_counts_plainly():
    from grader.testing import assert_no_loop

    def call_at(n):
        return lambda: torch.ones(n)[3]

    with pytest.raises(pytest.fail.Exception, match=r"^f\(x\) for 2 rows raised IndexError\("):
        assert_no_loop(call_at, 2, 5, what="f(x)", unit="rows", hint="-")
    with pytest.raises(AssertionError, match=r"^f\(x\) ran 1 tensor op for 2 rows but 2 for 3 "):
        assert_no_loop(
            lambda n: lambda: [torch.ones(1) for _ in range(n - 1)], 2, 3, what="f(x)", unit="rows", hint="-"
        )


def test_assert_no_loop_lets_a_method_chosen_by_size_pass():
    from grader.testing import assert_no_loop

    # torch.cdist runs other ops past 25 points, each once: no op of the small size repeats.
    assert_no_loop(
        lambda n: lambda: torch.cdist(torch.rand(n, 3), torch.rand(n, 3)), 8, 64, what="f(x)", unit="points", hint="-"
    )


def test_an_error_only_a_numpy_round_trip_raises_is_named_as_one_and_no_other_is():
    from grader import pitfalls
    from grader.testing.errors import raised

    def through_numpy(t):
        return torch.from_numpy(t.numpy())

    for t in (torch.ones(2, dtype=torch.bfloat16), torch.ones(2, device="meta")):
        error = _error_of(lambda: through_numpy(t))
        assert raised("f(x)", error).endswith(pitfalls.PITFALLS[0].told)
    assert pitfalls.named(_error_of(lambda: torch.from_numpy(torch.ones(2).numpy().sum()))) == pitfalls.PITFALLS[0].told
    # .numpy() on a tensor that requires grad is 01's lesson, where converting is the job: not named
    assert pitfalls.named(_error_of(lambda: torch.ones(2, requires_grad=True).numpy())) is None
    assert pitfalls.named(TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")) is None


def test_autograds_and_nn_modules_refusals_are_named_with_their_fix():
    from torch import nn

    from grader import pitfalls

    weight = torch.ones(2, requires_grad=True)
    assert "torch.no_grad()" in pitfalls.named(_error_of(lambda: weight.add_(1)))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.ones(1))  # before super().__init__()

    assert "super().__init__() first" in pitfalls.named(_error_of(Early))
    assert pitfalls.named(_error_of(lambda: weight.detach().numpy()[5])) is None  # an IndexError: no pitfall


def test_the_worst_elements_index_is_counted_row_major_as_torch_counts_it():
    from grader.testing.compare import _index

    x = torch.arange(24).reshape(2, 3, 4)
    assert all(x[_index(int(i), x.shape)] == i for i in range(24))
    assert _index(0, torch.Size([])) == ()


def test_a_comprehensions_frame_does_not_repeat_the_line_that_runs_it(tmp_path):
    """Python 3.11 gives a list comprehension a frame of its own, at the line of the function
    that runs it: the learner reads that line once."""
    import importlib.util

    from grader.testing.errors import raised

    (tmp_path / "mine.py").write_text("def inverses(xs):\n    return [1 // x for x in xs]\n")
    spec = importlib.util.spec_from_file_location("mine_for_test", tmp_path / "mine.py")
    mine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mine)
    with pytest.raises(ZeroDivisionError) as info:
        mine.inverses([1, 0])
    told = raised("inverses([1, 0])", info.value)
    assert told.count("return [1 // x for x in xs]") == 1 and ": in inverses" in told, told


def test_the_loop_read_sees_map_over_code_of_the_modules_own_but_not_formatting(tmp_path):
    """A loop with no loop's words (the red team's round 6: map over a lambda picking rows from
    tolist()) is read as one; map(str, ...) formatting an error message is not."""
    from grader.testing.source import looped

    (tmp_path / "m.py").write_text(
        "def rows(t):\n    r = t.tolist()\n    return list(map(lambda i: r[i], range(len(r))))\n\n\n"
        "def told(w):\n    return ', '.join(map(str, w))\n"
    )
    assert [s.word for s in looped([tmp_path / "m.py"], ["rows"])] == ["map()"]
    assert looped([tmp_path / "m.py"], ["told"]) == []
