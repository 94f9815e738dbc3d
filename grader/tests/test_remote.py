"""--kata-remote: the code under test in another process, the checks out of its reach."""

from __future__ import annotations

import inspect
import json
import os
import pickle
import textwrap
import time

import numpy as np
import pytest
import torch

from grader.remote import wire
from grader.tests.kits import SOLUTION
from grader.tests.test_harness import assert_outcomes, run


def solved(kit, body: str) -> None:
    """The demo lesson's solution file with `body` appended."""
    (kit.path / "solutions/98_demo/demo.py").write_text(SOLUTION + "\n" + body)


def test_stubs_answers_and_errors_read_as_they_do_in_process(kit):
    result = run(kit, "exercises/98_demo", "--kata-remote", "-m", "not speed")
    assert_outcomes(result, todo=3)
    result.stdout.fnmatch_lines(["*TODO: add (exercises/98_demo/demo.py:7) is not implemented yet*"])
    assert_outcomes(run(kit, "solutions/98_demo", "--kata-remote", "-m", "not speed"), passed=3)
    solved(kit, "def add(a, b):\n    return [][a]\n")
    result = run(kit, "solutions/98_demo", "--kata-remote", "-m", "not speed")
    result.stdout.fnmatch_lines(
        ["solutions/98_demo/demo.py:*: in add", "    return [][a]", "IndexError: list index out of range"]
    )


def test_a_syntax_error_names_its_file_and_line(kit):
    solved(kit, "def broken(:\n    pass\n")
    result = run(kit, "solutions/98_demo", "--kata-remote", "-m", "not speed")
    result.stdout.fnmatch_lines(["*solutions/98_demo/demo.py:*: SyntaxError*"])


def test_a_tests_calls_have_its_own_time_from_its_set_up_on(kit):
    """The code's process stops a call at what its test has left: counted from that test's start,
    its set-up (where the lesson is imported) included, never from an earlier test's limit."""
    solved(kit, "import time\n\ntime.sleep(0.4)  # a slow import, well within any test's limit\n")
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        "import time\n\n\n"
        "def test_the_first_takes_its_time():\n"
        "    time.sleep(2.2)  # past what a call of its could take (its timeout less a margin), not its timeout\n\n\n"
        "def test_the_next_imports_the_lesson(lesson):\n"
        "    assert lesson.add(2, 3) == 5\n"
    )
    result = run(kit, "solutions/98_demo", "--kata-remote", "--timeout", "2.5")
    assert_outcomes(result, passed=2)


# What passes in-process and must not once the code is kept away from the checks.
ATTACKS = {
    "an answer that equals anything": "class _Yes:\n    def __eq__(self, other):\n        return True\n\n\n"
    "def add(a, b):\n    return _Yes()\n",
    # (the test modules found in sys.modules: the kit freezes what the gc sees before tests run)
    "tests rewritten in memory": "import sys\n\n\ndef _nothing(lesson):\n    pass\n\n\n"
    "for _m in [m for n, m in list(sys.modules.items()) if 'test_' in n]:\n"
    "    for _f in [f for n, f in vars(_m).items() if n.startswith('test_')]:\n"
    "        if getattr(_f, '__code__', None) and _f.__code__.co_varnames[:1] == ('lesson',):\n"
    "            _f.__code__ = _nothing.__code__\n\n\n"
    "def add(a, b):\n    return 0\n",
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_attacks_that_pass_in_process_fail_remotely(kit, attack):
    # A learner's file, not the kit's answer: with the checks apart, the answer is imported beside them.
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION + "\n" + ATTACKS[attack])
    in_process = run(kit, "exercises/98_demo", "-m", "not speed", "-k", "add")
    assert "failed" not in in_process.parseoutcomes(), in_process.stdout.str()  # the attack works there
    remote = run(kit, "exercises/98_demo", "--kata-remote", "-m", "not speed", "-k", "add")
    assert remote.parseoutcomes().get("failed") == 2, remote.stdout.str()


# A test that works out what it expects from its input after the call, and answers that zero
# that input and return the result for zeros: (how the write is made, in-process passes).
ZEROES = {
    "told (an in-place op)": "def scale(x, k=2):\n    x.zero_()\n    return x * k\n",
    "hidden (through NumPy, no version bump)": "def scale(x, k=2):\n    x.numpy()[:] = 0\n    return x * k\n",
}


@pytest.mark.parametrize("answer", ZEROES)
def test_an_answer_that_zeroes_its_input_gains_nothing_remotely(kit, answer):
    (kit.path / "tests/98_demo/test_demo.py").write_text(
        "import torch\n\n\ndef test_scale_of_its_input(lesson):\n    x = torch.tensor([1.0, 2.0])\n"
        "    out = lesson.scale(x)\n    torch.testing.assert_close(out, x * 2)\n"
    )
    (kit.path / "exercises/98_demo/demo.py").write_text(SOLUTION + "\n" + ZEROES[answer])
    assert_outcomes(run(kit, "exercises/98_demo"), passed=1)  # in-process, the attack works
    remote = run(kit, "exercises/98_demo", "--kata-remote")
    assert_outcomes(remote, failed=1)
    out = remote.stdout.str()
    if answer.startswith("told"):  # S told of the write: the call fails, saying so
        assert "scale() wrote into its argument x in place: the caller's tensors must stay as they were" in out, out
    else:  # S hid it: this process's x is as the test made it, and the zeros are compared with it
        assert "Mismatched elements: 2 / 2" in out, out


# A speed test on tensors, and answers to it: (in-process passes, remote passes).
SPEED_TESTS = """\
import pytest
import torch

from grader.testing import assert_speed


@pytest.mark.speed
def test_columns_fast(lesson):
    x = torch.rand(400, 50)  # 80 kB: a timed call runs on 13 copies, of which CHECKED are checked
    assert_speed(lambda: [row.sum() for row in x], lambda: lesson.columns(x), at_least=5,
                 what="columns", baseline_name="a loop over rows")
"""
LOOP = "def _slow(x):\n    total = x[0].clone()\n    for row in x[1:]:\n        total += row\n    return total\n\n\n"
SPEED_ANSWERS = {
    "one reduction": ("def columns(x):\n    return x.sum(0)\n", (True, True)),
    "a loop": (LOOP + "def columns(x):\n    return _slow(x)\n", (False, False)),
    "a loop, its answer kept per address": (
        LOOP + "_seen = {}\n\n\ndef columns(x):\n    key = x.data_ptr()\n"
        "    if key not in _seen:\n        _seen[key] = _slow(x)\n    return _seen[key]\n",
        (True, False),
    ),
    "a loop, its answer kept per first values": (
        LOOP + "_seen = {}\n\n\ndef columns(x):\n    key = tuple(x[0, :4].tolist())\n"
        "    if key not in _seen:\n        _seen[key] = _slow(x)\n    return _seen[key]\n",
        (True, False),
    ),
    # Made-up results save most of the time; the results checked are drawn after they came.
    "a loop, fifteen results in sixteen made up": (
        "import torch\n\n\n" + LOOP + "_calls = [0]\n\n\ndef columns(x):\n    _calls[0] += 1\n"
        "    if _calls[0] % 16:\n        return torch.zeros(x.shape[1])\n    return _slow(x)\n",
        (True, False),
    ),
    "a loop, its answer kept per shape": (
        LOOP + "_seen = {}\n\n\ndef columns(x):\n    key = x.shape\n"
        "    if key not in _seen:\n        _seen[key] = _slow(x)\n    return _seen[key]\n",
        (True, False),
    ),
    # The clocks a speed test could read stand still while the loop runs (time's own functions
    # patched, as grader.testing.speed's `time` is that module).
    "a loop, the clocks stopped while it runs": (
        LOOP + "import time\n\n_spent = [0.0]\n_real = {name: getattr(time, name) for name in "
        "('perf_counter', 'thread_time', 'process_time', 'monotonic', 'time')}\n"
        "for _name, _clock in _real.items():\n"
        "    setattr(time, _name, lambda _clock=_clock: _clock() - _spent[0])\n\n\n"
        "def columns(x):\n    start = _real['perf_counter']()\n    try:\n        return _slow(x)\n"
        "    finally:\n        _spent[0] += _real['perf_counter']() - start\n",
        (True, False),
    ),
    # The speed module's own `time` swapped for clocks that stand still while the loop runs.
    "a loop, the speed module's clock swapped": (
        LOOP + "import sys\nimport time\nimport types\n\n_spent = [0.0]\n"
        "_speed = sys.modules.get('grader.testing.speed')\nif _speed is not None:\n"
        "    _speed.time = types.SimpleNamespace(perf_counter=lambda: time.perf_counter() - _spent[0],\n"
        "                                        thread_time=lambda: time.thread_time() - _spent[0])\n\n\n"
        "def columns(x):\n    start = time.perf_counter()\n    try:\n        return _slow(x)\n"
        "    finally:\n        _spent[0] += time.perf_counter() - start\n",
        (True, False),
    ),
}


@pytest.mark.parametrize("answer", SPEED_ANSWERS)
def test_speed_is_timed_in_the_other_process_on_fresh_inputs(kit, answer):
    """S's CPU time counts, each call has new values at a new address, and its results are
    checked against the kit's answer: a memoised loop is fast in-process (the test times one
    tensor) and slow, or wrong, remotely."""
    source, (in_process, remote) = SPEED_ANSWERS[answer]
    (kit.path / "tests/98_demo/test_demo.py").write_text(SPEED_TESTS)
    (kit.path / "solutions/98_demo/demo.py").write_text(SPEED_ANSWERS["one reduction"][0])
    (kit.path / "exercises/98_demo/demo.py").write_text(source)
    for args, expected in (((), in_process), (("--kata-remote",), remote)):
        result = run(kit, "exercises/98_demo", *args)
        assert result.parseoutcomes().get("passed" if expected else "failed") == 1, (args, result.stdout.str())
    if "made up" in answer:  # caught by the results checked, not by its speed
        assert "gave a wrong answer in a speed test" in result.stdout.str(), result.stdout.str()


def test_a_protocol_cost_handed_to_the_tests_is_the_one_they_subtract(kit):
    """Class grading measures a timed call's protocol cost once, on the kit's answer, and hands it
    to each student's run (--kata-overhead): what it hands is what is subtracted, so it comes
    from the grader alone. A cost as large as the loop's calls makes the loop pass."""
    (kit.path / "tests/98_demo/test_demo.py").write_text(SPEED_TESTS)
    (kit.path / "solutions/98_demo/demo.py").write_text(SPEED_ANSWERS["one reduction"][0])
    (kit.path / "exercises/98_demo/demo.py").write_text(SPEED_ANSWERS["a loop"][0])
    result = run(kit, "exercises/98_demo", "--kata-remote", "--kata-overhead", "0.09:0.09")
    assert result.parseoutcomes().get("passed") == 1, result.stdout.str()


@pytest.mark.parametrize("n", [5, 16 * 4096, 20 * 4096, 20 * 4096 + 17])
def test_a_timed_calls_fresh_values_are_the_inputs_own_in_another_order(n):
    """Small storages get any order; large ones, blocks of SHUFFLE_BLOCK in any order, then
    the whole turned (the tail past the last whole block included)."""
    from grader.remote.timed import _shuffled

    values = torch.arange(n)
    orders = set()
    for seed in range(6):
        torch.manual_seed(seed)
        fresh = _shuffled(values)
        assert fresh.shape == values.shape and torch.equal(fresh.sort().values, values)
        orders.add(tuple(fresh[:8].tolist()))
    assert len(orders) > 1


def test_a_functions_signature_crosses_where_its_defaults_are_data():
    """A test that reads a signature (01's fit_polynomial defaults) reads S's description of
    it; a default that is not data, or a description that is no signature, gives none."""
    from grader.remote import server
    from grader.remote.errors import Unremotable
    from grader.remote.stand_in import RemoteFunction

    def fit(x, y, degree: int, steps=1000, lr=0.1, *rest, seed=None, **options) -> None: ...

    def with_a_function(x, fn=print): ...

    crossed = RemoteFunction(None, "fit", "", wire.decode(wire.encode(server._parameters(fit))))
    assert inspect.signature(crossed) == inspect.signature(fit).replace(
        return_annotation=inspect.Signature.empty
    ).replace(parameters=[p.replace(annotation=p.empty) for p in inspect.signature(fit).parameters.values()])
    assert server._parameters(with_a_function) is None
    for described in (None, [["x", 1, 2], ["y", 1]], [["not a name", 1]], [["x", 99]], [[]], [{"x": 1}], 3):
        with pytest.raises(Unremotable, match="signature did not cross"):
            inspect.signature(RemoteFunction(None, "f", "", described))


def test_data_crosses_with_its_layout_and_nothing_else_does():
    base = torch.arange(20.0).reshape(4, 5)
    message = {
        "views": (base.t(), base[1:]),
        "expanded": torch.ones(1, 3).expand(2, 3),
        "meta": torch.empty(2, 3, device="meta"),
        "half": base.half(),
        "complex": torch.tensor(1 + 2j),
        "scalars": [None, True, 3, 2.5, float("nan"), "s", 1 + 1j, torch.float16, torch.Size([2])],
    }
    back = wire.decode(wire.encode(message))
    for got, sent in [
        (back["views"][0], message["views"][0]),
        (back["expanded"], message["expanded"]),
        (back["half"], message["half"]),
        (back["complex"], message["complex"]),
    ]:
        assert (got.dtype, got.shape, got.stride(), got.storage_offset()) == (
            sent.dtype,
            sent.shape,
            sent.stride(),
            sent.storage_offset(),
        )
        assert torch.equal(got, sent)
    assert back["views"][0].untyped_storage().data_ptr() == back["views"][1].untyped_storage().data_ptr()
    assert back["meta"].device.type == "meta"
    assert back["scalars"][:4] == [None, True, 3, 2.5] and back["scalars"][5:] == message["scalars"][5:]
    array = wire.decode(wire.encode(wire.plain({"a": np.arange(6.0).reshape(2, 3).T})))["a"]
    assert type(array) is np.ndarray and array.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    with pytest.raises(TypeError):
        wire.encode({"a": object()})
    with pytest.raises(TypeError):
        wire.encode(torch.nn.Parameter(torch.zeros(1)))  # a subclass of Tensor is not data


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_result_on_an_arguments_storage_comes_back_as_a_view_of_the_callers_argument(device):
    """S's copy of x is a copy; a result on its storage is made a view of the caller's x, with
    the same offset and strides, so writes into x show through it as they would in one process."""
    x = torch.arange(40.0, device=device).reshape(10, 4)[3:]
    there = wire.decode(wire.encode([x]))[0]  # the argument as S has it
    result = {"windows": there.as_strided((3, 4, 2), (4, 1, 4), there.storage_offset() + 4), "copy": there.clone()}
    back = wire.with_views(wire.decode(wire.encode(wire.as_views(wire.plain(result), [there]))), [x])
    windows = back["windows"]
    assert (windows.shape, windows.stride(), windows.storage_offset()) == ((3, 4, 2), (4, 1, 4), 16)
    assert windows.untyped_storage()._cdata == x.untyped_storage()._cdata
    assert back["copy"].untyped_storage()._cdata != x.untyped_storage()._cdata
    if device == "cpu":  # (a meta tensor has no values, and no end that a view could pass)
        x[1, 0] = -1.0  # element 16 of the storage: the first of the windows
        assert windows[0, 0, 0] == -1.0
        with pytest.raises(wire.Broken, match="not one"):  # a view past the end of the caller's storage
            wire.with_views({wire._VIEW: [0, "float32", [10], [1], 39]}, [x])
    with pytest.raises(wire.Broken, match="not one"):  # of an argument there is not
        wire.with_views({wire._VIEW: [1, "float32", [1], [1], 0]}, [x])


def _frame(entry: list, data: bytes = b"") -> bytes:
    """A frame holding one tensor described by `entry` (dtype, shape, strides, offset, where its
    bytes lie, how many), with `data` as its bytes."""
    header = json.dumps({"v": ["t", 0], "t": [entry]}).encode()
    return wire._HEADER.pack(len(header)) + header + data


@pytest.mark.parametrize(
    "payload",
    [
        _frame(["float32", [2**28], [1], 0, 0, 0]),  # no bytes, a large shape: an empty storage grown to fit
        _frame(["float32", [2**29], [0], 0, 0, 4], bytes(4)),  # one element expanded to 2 GiB, copied by any check
        _frame(["float32", [2], [-1], 1, 0, 8], bytes(8)),  # a negative stride
        _frame(["float32", [2], [1], 1, 0, 8], bytes(8)),  # one element past its bytes
        pickle.dumps({"a": 1}),  # a pickle is never read
        wire._HEADER.pack(9) + b'{"v": 1}',  # a header longer than the frame
        wire.encode(1).replace(b"1", b'["x", 1]', 1),  # an unknown tag
        wire.encode(torch.zeros(2)).replace(b'"float32"', b'"Tensor"'),  # a name that is not a dtype
        wire.encode({1: 2}).replace(b"[[1, 2]]", b"[[1.5, 2]]"),  # a dict key that is not a str or an int
        wire.encode(torch.zeros(2)).replace(b'"float32", [2], [1], 0, 0, 8]', b'"float32", [2], [1], 0, 0, 99]'),
    ],
)
def test_a_frame_that_is_not_plain_data_is_refused(payload):
    with pytest.raises(wire.Broken):
        wire.decode(payload)


def test_a_request_the_codes_process_cannot_read_is_answered_as_an_error_and_it_goes_on():
    import os
    import socket

    from grader.remote import errors, shared
    from grader.remote.server import Server

    here, there = socket.socketpair()
    child = os.fork()
    if child == 0:  # pragma: no cover - S
        try:
            here.close()
            Server(there, shared.create()).serve()
        finally:
            os._exit(0)
    there.close()
    try:
        here.sendall(
            wire._LENGTH.pack(len(_frame(["float32", [9], [1], 0, 0, 0]))) + _frame(["float32", [9], [1], 0, 0, 0])
        )
        reply = wire.decode(wire.receive_payload(here))
        assert reply["refused"] and "could not read a request" in reply["error"]["message"]
        with pytest.raises(errors.Refused, match="could not read a request"):  # the kit's error, told as such
            errors.raise_error(reply)
        wire.send(here, {"op": "get", "module": 0, "name": "x"})  # and it still answers
        assert wire.decode(wire.receive_payload(here))["error"]["type"] == "KeyError"
    finally:
        here.close()
        os.waitpid(child, 0)


def test_a_timed_result_is_copied_out_of_shared_memory_only_where_it_lies_and_at_a_bounded_size():
    from grader.remote import shared

    memory = shared.Shared(shared.create())
    x = torch.arange(6.0)
    memory.bytes[64:88].copy_(x.view(torch.uint8))
    assert torch.equal(memory.take({shared._KEY: [64, 24, torch.float32, [2, 3], [3, 1], 0, False]}), x.view(2, 3))
    for placed in (
        [64, 24, torch.float32, [7], [1], 0, False],  # past its bytes
        [64, 64, torch.float32, [2**29], [0], 0, False],  # one element expanded to 2 GiB
        [shared.SIZE - 8, 16, torch.float32, [4], [1], 0, False],
    ):  # past the memory's end
        with pytest.raises(ValueError, match="placed wrongly"):
            memory.take({shared._KEY: placed})


def test_a_timed_input_has_a_storage_of_its_own_size_as_any_argument_has():
    """A timed call's inputs lie in the memory T and S share, but each as a storage of its own
    size: an answer that asks its input's storage how large it is (the shared memory's 256 MiB,
    before) cannot tell a timed call from any other. A result that is a view of an input is
    found where it lies."""
    from grader.remote import shared

    fd = shared.create()
    here, there = shared.Shared(fd), shared.Shared(fd)
    x = torch.arange(12.0).view(3, 4)
    placed, write = here.place(((x[:, 1:],), {}))
    write()
    (view,), _ = there.resolve(placed)
    assert view.untyped_storage().nbytes() == x.untyped_storage().nbytes() == 48
    assert torch.equal(view, x[:, 1:]) and view.stride() == (4, 1)
    back = here.take(there.put(view[1]))  # a view of the input: described where it lies
    assert torch.equal(back, x[1, 1:])


def test_a_scenario_reaches_the_code_as_its_own_source_not_as_the_test_file(tmp_path):
    """What the code's process gets of a test file: the scenario and what it reaches by name
    (a helper, a constant, an import), each at its own line; not the file's docstring (its
    contract table), other tests, or what they expect."""
    import importlib.util

    from grader.testing.scenario import source_of

    (tmp_path / "test_x.py").write_text(
        textwrap.dedent('''\
        """The contract: SECRET."""
        import math

        from grader.testing.scenario import beside

        SIZE = 3
        EXPECTED = "SECRET"


        def made(lesson):
            return lesson.Thing(SIZE)


        @beside
        def seen(lesson, x):
            return made(lesson).run(x) + math.pi


        def test_seen(lesson):
            assert seen(lesson, 1) == EXPECTED
    ''')
    )
    spec = importlib.util.spec_from_file_location("test_x", tmp_path / "test_x.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    source = source_of(tests.seen._kata_scenario_of)
    assert "SECRET" not in source and "test_seen" not in source, source
    lines = source.splitlines()
    assert (lines[1], lines[5], lines[14]) == ("import math", "SIZE = 3", "def seen(lesson, x):"), source
    namespace = {}
    exec(compile(source, str(tmp_path / "test_x.py"), "exec"), namespace)
    assert namespace["seen"]._kata_scenario_of.__code__.co_firstlineno == 14  # as in the file


def test_a_call_that_spends_cpu_in_another_thread_is_noted_for_a_person():
    """What watches a call in S (its ops, its loops) watches the thread that serves it: work in
    another thread (asyncio.to_thread, a pool) is out of its sight. The tests' process reads the
    CPU S's threads spend beside the serving one (its process clock less that thread's own) and
    notes a call that spent some; a call on one thread earns nothing."""
    import subprocess
    import sys

    from grader import running
    from grader.remote.connection import Connection

    code = (
        "import sys, threading, time\n"
        "def spin(seconds):\n    end = time.thread_time() + seconds\n    while time.thread_time() < end:\n        pass\n"
        "for line in sys.stdin:\n"
        "    if line.strip() == 'thread':\n        t = threading.Thread(target=spin, args=(0.05,)); t.start(); t.join()\n"
        "    else:\n        spin(0.05)\n"
        "    print('done', flush=True)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    connection = object.__new__(Connection)
    connection.root, connection.processes, connection.watched, connection.threaded = process.pid, False, None, set()
    connection.process = None  # S as class grading starts it, not this process
    try:
        for how, noted in (("here", False), ("thread", True)):
            test = running.RunningTest("a test")
            token = running.TEST.set(test)
            try:
                with connection.threads_watched("add"):
                    process.stdin.write(how + "\n")
                    process.stdin.flush()
                    assert process.stdout.readline() == "done\n"
            finally:
                running.TEST.reset(token)
            notes = list(test.review)
            assert bool(notes) == noted, (how, notes)
        assert "add spent" in notes[0] and "in another thread" in notes[0], notes
    finally:
        process.kill()
        process.wait()


def test_a_fifo_an_error_names_is_never_opened(tmp_path, monkeypatch):
    """A FIFO or a device named as an error's file, in the learner's folder or elsewhere, is
    looked at (O_PATH), never opened to read: a writer waiting on a FIFO's other side would see a
    reader (a red team's host FIFO was opened 12 times), and a device may block or take a
    terminal."""
    from grader.remote import errors

    mine = tmp_path / "lesson"
    mine.mkdir()
    os.mkfifo(mine / "pipe.py")
    (mine / "tty.py").symlink_to("/dev/tty")
    opened, real_open = [], os.open

    def watched(path, flags, *args, **kwargs):
        if not flags & os.O_PATH:
            opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", watched)
    for name in ("pipe.py", "tty.py"):
        assert not errors._learners_file(str(mine / name), (mine.resolve(),))
    assert not errors._learners_file("/dev/tty", (mine.resolve(),))
    assert opened == []
    (mine / "demo.py").write_text("x = 1\n")
    assert errors._learners_file(str(mine / "demo.py"), (mine.resolve(),))
    assert len(opened) == 1  # the regular file, once: through /proc, the inode looked at


def test_an_errors_frames_name_only_the_learners_files(tmp_path):
    """S names the files of an error's frames; only a regular file under the learner's folder is
    kept, read once into linecache, so that no reader of the traceback here opens any other."""
    import linecache

    from grader.remote import errors

    mine, elsewhere = tmp_path / "lesson", tmp_path / "kit"
    mine.mkdir()
    elsewhere.mkdir()
    (mine / "demo.py").write_text("def add(a, b):\n    raise ValueError('no')\n")
    (elsewhere / "answer.py").write_text("SECRET = 1\n")
    (mine / "link.py").symlink_to(elsewhere / "answer.py")
    roots = (mine.resolve(),)
    for name in ("link.py", "../kit/answer.py", "missing.py"):
        assert not errors._learners_file(str(mine / name), roots), name
    assert not errors._learners_file("/dev/zero", roots)
    import linecache as cache

    cache.cache["/generated/by/a/library.py"] = (9, None, ["SECRET = 1\n"], "/generated/by/a/library.py")
    assert not errors._learners_file("/generated/by/a/library.py", roots)  # in linecache, not the learner's
    assert not errors._learners_file(str(elsewhere / "answer.py"), roots)
    assert errors._learners_file(str(mine / "demo.py"), roots)
    (mine / "demo.py").write_text("changed\n")  # read once: what S does to it later is not read
    (mine / "folder").symlink_to(elsewhere)  # a link on the way is not followed either
    assert not errors._learners_file(str(mine / "folder" / "answer.py"), roots)
    assert linecache.getline(str(mine / "demo.py"), 2) == "    raise ValueError('no')\n"
    with pytest.raises(ValueError) as caught:
        errors.raise_error(
            {
                "error": {
                    "type": "ValueError",
                    "name": "ValueError",
                    "message": "no",
                    "frames": [(str(elsewhere / "answer.py"), 1, "f"), (str(mine / "demo.py"), 2, "add")],
                }
            },
            roots,
        )
    assert [entry.tb_frame.f_code.co_filename for entry in _entries(caught.value.__traceback__)][-1:] == [
        str(mine / "demo.py")
    ]
    assert str(elsewhere / "answer.py") not in [
        e.tb_frame.f_code.co_filename for e in _entries(caught.value.__traceback__)
    ]


def _entries(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_cpu_time_is_read_from_outside_and_a_process_that_ends_mid_call_is_refused():
    import subprocess
    import sys

    from grader.remote import cputime

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\ninput()",
        ],
        stdin=subprocess.PIPE,
    )
    try:
        before = after = cputime.sample(child.pid)
        deadline = time.monotonic() + 30
        while cputime.spent(before, after) < 0.15 and time.monotonic() < deadline:  # its busy loop, seen from here
            time.sleep(0.05)
            after = cputime.sample(child.pid)
        assert cputime.spent(before, after) >= 0.15
        child.communicate(b"\n", timeout=10)
        with pytest.raises(cputime.Ended, match="ended during a timed call"):
            cputime.spent(after, cputime.sample(child.pid))
    finally:
        child.kill()


SCENARIO_TESTS = """\
import torch

from grader.testing.scenario import beside


@beside
def counted(lesson, start, times):
    counter = lesson.Counter(start)
    for _ in range(times):
        counter.step()
    return counter.value, torch.tensor(counter.history)


def test_counter(lesson):
    value, history = counted(lesson, 2, 3)
    assert value == 5, value
    assert history.tolist() == [3, 4, 5], history
"""
COUNTER = (
    "class Counter:\n    def __init__(self, start):\n        self.value, self.history = start, []\n\n"
    "    def step(self):\n        self.value += 1\n        self.history.append(self.value)\n"
)
# Counters as students write them: (in-process passes, remote passes).
COUNTERS = {
    "right": (COUNTER, (True, True)),
    "wrong": (COUNTER.replace("self.value += 1", "self.value += 2"), (False, False)),
    "a value that equals anything": (
        "class _Yes:\n    def __eq__(self, other):\n        return True\n\n    def tolist(self):\n        return self\n\n\n"
        + COUNTER.replace("self.value, self.history = start, []", "self.value, self.history = _Yes(), []")
        .replace("self.value += 1", "pass")
        .replace("self.history.append(self.value)", "self.history = [3, 4, 5]"),
        (True, False),
    ),
}


@pytest.mark.parametrize("counter", COUNTERS)
def test_a_scenario_drives_the_objects_beside_the_code_and_its_observations_are_checked_here(kit, counter):
    """grader.testing.scenario: the test's scenario builds and steps the learner's object in the
    code's process; only what it returns crosses, and the test checks that here. An object
    that answers "equal" to anything cannot cross, so it fails remotely."""
    source, (in_process, remote) = COUNTERS[counter]
    (kit.path / "tests/98_demo/test_demo.py").write_text(SCENARIO_TESTS)
    (kit.path / "exercises/98_demo/demo.py").write_text(source)
    for args, expected in (((), in_process), (("--kata-remote",), remote)):
        result = run(kit, "exercises/98_demo", *args)
        assert result.parseoutcomes().get("passed" if expected else "failed") == 1, (args, result.stdout.str())


def test_a_scenario_that_is_not_at_the_top_level_of_its_file_is_refused():
    from grader.testing.scenario import beside

    def inner(lesson):
        return 1

    with pytest.raises(TypeError, match="top level"):
        beside(inner)
