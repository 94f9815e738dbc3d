"""S, the process the code under test lives in: it answers the tests' calls, one at a time.

Requests (dicts, grader.remote.wire) and what each answers:

- ``load``: import the module under test (grader.learners_code.import_code); an error at
  import comes back as its record, a SyntaxError with where it is;
- ``get``: what a name of the module is: a function (with its parameters, where their defaults
  are data), plain data (sent), or something that cannot cross (a class, an object);
- ``stub``: whether names are all untouched stubs, and, asked to, build the first (its TODO);
- ``call``: call a function on the arguments sent, the tensors flagged ``grad`` made leaves that
  require grad; answers the result, the arguments the call wrote into, the aten ops it ran
  (when asked) and, when the result tracks gradients, a handle on the graph;
- ``scenario``: run a scenario of the tests (grader.testing.scenario), a function of a test
  file that drives the module's objects here, on the arguments sent; answers what it returns;
- ``backward``: the vector-Jacobian product of a kept graph; ``free``: forget graphs;
- ``prepare`` and ``go``: a timed call, its inputs sent first, its start a one-byte message.

Any request may carry ``stand_in``, a loop's number (grader.plugin.loops): the function the
last call stopped by its limit was running is replaced, before the request, by a stand-in that
ends each call at once, its answer saying which loop it waits on (``waiting``).

Every call runs under a time limit of its own, which stops it with the line it was running.
"""

from __future__ import annotations

import signal
import socket
import sys
import traceback
from pathlib import Path
from types import FunctionType, ModuleType

import torch
from torch.utils._pytree import tree_flatten

from grader import learners_code, running
from grader.remote import shared, wire
from grader.stand_ins import LoopReached, stand_in


class _TimedOut(BaseException):
    """A call ran past its limit (a BaseException: `except Exception` in the learner's code
    does not swallow it)."""


def _on_alarm(signum, frame):
    raise _TimedOut()


class Server:
    def __init__(self, sock: socket.socket, memory: int) -> None:
        # No test runs in this process: the recorders made here (the calls', a scenario's allocation
        # recorder) are in no running test's lists (grader.testing.forbid), where the code could
        # reach them and strike what they recorded (the red team's, round 5). This process serves
        # nothing else, so the pointer is cleared for good, not reset.
        running.TEST.set(None)
        self.sock = sock
        self.shared = shared.Shared(memory)
        self.modules: dict[int, ModuleType] = {}
        self.roots: tuple[Path, ...] = ()  # the learner's files: frames under these cross
        self.graphs: dict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}
        self.prepared = None
        self.next_handle = 0
        self.test_files: dict[tuple[str, str], ModuleType] = {}  # (file, scenario) -> what of it runs here
        self.stopped: list = []  # (code, its module's namespace) of the learner's frames of the call the limit stopped last

    def serve(self) -> None:
        from grader.testing.speed import keep_freed_memory

        signal.signal(signal.SIGALRM, _on_alarm)
        keep_freed_memory()  # as the tests' process does: no call pays for faulting its buffers in again
        while True:
            try:
                payload = wire.receive_payload(self.sock)
            except (wire.Broken, OSError):
                return
            if payload is None:
                return
            try:
                request = wire.decode(payload)
            except wire.Broken as exc:  # the tests' own data, which the frame's checks refuse: say so there
                wire.send(
                    self.sock,
                    {
                        "error": wire.error_record(
                            RuntimeError(f"the code's process could not read a request of the tests: {exc}"), ()
                        ),
                        "refused": True,
                    },
                )
                continue
            for handle in request.get("free", ()):
                self.graphs.pop(handle, None)
            if "stand_in" in request:
                self._stand_in(request["stand_in"])
            try:
                reply = getattr(self, "op_" + request["op"])(request)
            except _TimedOut as exc:
                reply = {"error": wire.error_record(exc, self.roots), "timeout": True}
                self.stopped = [
                    (frame.f_code, frame.f_globals)
                    for frame, _ in traceback.walk_tb(exc.__traceback__)
                    if wire.under(frame.f_code.co_filename, self.roots)
                ]
            except LoopReached as exc:
                reply = {"error": wire.error_record(exc, self.roots), "waiting": exc.key}
            except BaseException as exc:  # noqa: BLE001 (the learner's error is data, a pytest.skip's too)
                reply = {"error": wire.error_record(exc, self.roots)}
            try:
                wire.send(self.sock, reply)
            except TypeError as exc:  # a result that cannot cross
                wire.send(self.sock, {"error": wire.error_record(exc, ()), "unremotable": True})

    def _stand_in(self, key) -> None:
        """Replace the function the call the limit stopped last was running by loop `key`'s stand-in."""
        if type(key) is int and self.stopped:
            stand_in(self.stopped, key)
        self.stopped = []

    # --- requests ------------------------------------------------------------------------

    def op_ready(self, request) -> dict:
        """Nothing: the answer says this process has started (a spawned one imports torch first)."""
        return {}

    def op_load(self, request) -> dict:
        root, mutant, file = (Path(p) if p else None for p in (request["root"], request["mutant"], request["file"]))
        self.roots = tuple(Path(p).resolve() for p in request["roots"])
        with _limit(request.get("timeout")):
            module = learners_code.import_code(root, request["lesson"], request["stem"], request["tree"], mutant, file)
        key = len(self.modules)
        self.modules[key] = module
        return {"module": key, "file": getattr(module, "__file__", None)}

    def op_get(self, request) -> dict:
        value = getattr(self.modules[request["module"]], request["name"])
        if isinstance(value, FunctionType):
            return {"kind": "function", "doc": value.__doc__ or "", "parameters": _parameters(value)}
        try:
            return {"kind": "value", "value": wire.plain(value)}
        except TypeError:
            return {"kind": "other", "type": type(value).__qualname__, "is_class": isinstance(value, type)}

    def op_stub(self, request) -> dict:
        """Whether the names are all untouched stubs of the module (grader.learners_code, as
        the tests' process finds them in-process); with "raise", the first is built as the
        plugin builds it, which raises its TODO."""
        stubs = [vars(self.modules[request["module"]]).get(name) for name in request["names"]]
        if not all(learners_code.is_untouched(stub, self.roots) for stub in stubs):
            return {"untouched": False}
        if request.get("raise"):
            with _limit(request["timeout"]):
                learners_code.raise_from(stubs[0])
        return {"untouched": True}

    def op_call(self, request) -> dict:
        fn = getattr(self.modules[request["module"]], request["name"])
        args, kwargs = request["args"], request["kwargs"]
        inputs = _tensors((args, kwargs))
        for t, grad in zip(inputs, request["grad"]):
            if grad:
                t.requires_grad_()
        versions = [t._version for t in inputs]
        with _limit(request["timeout"]), _recording(request) as ops, _defaults(request["defaults"]):
            result = fn(*args, **kwargs)
        return self._answer(result, inputs, versions, ops, keep=any(request["grad"]))

    def op_scenario(self, request) -> dict:
        module = self.modules[request["module"]]
        with _limit(request["timeout"]), _recording(request) as ops, _defaults(request["defaults"]):
            scenario = self._scenario(request["file"], request["name"], request["source"])
            result = scenario(module, *request["args"], **request["kwargs"])
        return {"value": wire.plain(result), **_ops(ops)}

    def _scenario(self, file: str, name: str, source: str):
        """The scenario `name` of the test file `file`, from the `source` T sent of it (that
        function and what it reaches: grader.testing.scenario.source_of): this process does not
        see the test files. Run once a scenario, as a module of its own."""
        key = (file, name)
        tests = self.test_files.get(key)
        if tests is None:
            tests = ModuleType(f"_kata_tests_{len(self.test_files)}")
            tests.__file__ = file
            sys.modules[tests.__name__] = tests  # (a dataclass looks its module up)
            exec(compile(source, file, "exec"), tests.__dict__)
            self.test_files[key] = tests
        return getattr(tests, name)._kata_scenario_of

    def op_prepare(self, request) -> dict:
        inputs = self.shared.resolve(request["inputs"])
        self.shared.populate()  # no page of the inputs faults in during the call, as none would in-process
        # No module: the protocol's own cost, measured before any of the learner's code is loaded.
        fn = _same if request["module"] is None else getattr(self.modules[request["module"]], request["name"])
        self.prepared = (fn, inputs, request["timeout"], request["defaults"])  # the values are written at "go"
        return {}

    def op_go(self, request) -> dict:
        (fn, inputs, timeout, defaults), self.prepared = self.prepared, None
        with _limit(timeout), _recording(request) as ops, _defaults(defaults):  # (recorded: not timed)
            results = [fn(*args, **kwargs) for args, kwargs in inputs]
        if len(results) > 1 and _alike(results):  # one block, not a description of each: much cheaper
            return {"stacked": self.shared.put(torch.stack(results)), **_ops(ops)}
        return {"values": self.shared.put(wire.plain(results)), **_ops(ops)}

    def op_backward(self, request) -> dict:
        inputs, outputs = self.graphs[request["handle"]]
        pairs = [(o, g) for o, g in zip(outputs, request["grads"]) if g is not None and o.requires_grad]
        wanted = [t for t in inputs if t.requires_grad]
        grads = [None] * len(wanted)
        if pairs and wanted:
            with _limit(request["timeout"]), _recording(request) as ops:
                grads = torch.autograd.grad(
                    [o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True, retain_graph=True
                )
        else:
            ops = None
        by_input = iter(grads)
        return {"grads": [next(by_input) if t.requires_grad else None for t in inputs], **_ops(ops)}

    def _answer(self, result, inputs, versions, ops, keep: bool) -> dict:
        outputs = _tensors(result)
        reply = {
            "value": wire.as_views(wire.plain(result), inputs),
            **_ops(ops),
            "changed": [i for i, (t, v) in enumerate(zip(inputs, versions)) if t._version != v],  # written into
            "tracks": [o.requires_grad for o in outputs],
        }
        if keep and any(reply["tracks"]):
            self.next_handle += 1
            self.graphs[self.next_handle] = (inputs, outputs)
            reply["handle"] = self.next_handle
        return reply


def _parameters(fn: FunctionType) -> list | None:
    """`fn`'s parameters as data, [name, kind, default] each (no default: [name, kind]), so a
    test can read its signature from the other process; None where a default is not data."""
    import inspect

    try:
        return [
            [p.name, int(p.kind), *([] if p.default is p.empty else [wire.plain(p.default)])]
            for p in inspect.signature(fn).parameters.values()
        ]
    except (TypeError, ValueError):
        return None


def _same(x):
    return x


def _alike(results: list) -> bool:
    """Whether the results are plain CPU tensors of one dtype and shape, none tracking gradients."""
    first = results[0]
    return all(
        type(r) is torch.Tensor
        and r.device.type == "cpu"
        and not r.requires_grad
        and r.dtype == first.dtype
        and r.shape == first.shape
        for r in results
    )


def _tensors(tree) -> list[torch.Tensor]:
    return [leaf for leaf in tree_flatten(tree)[0] if isinstance(leaf, torch.Tensor)]


class _limit:
    """SIGALRM after `seconds` (None: no limit), raising _TimedOut where the call is."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds

    def __enter__(self):
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.01))

    def __exit__(self, *exc):
        if self.seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)


class _defaults:
    """torch's default device and dtype, and its number of threads, as the tests' process had
    them for this call."""

    def __init__(self, defaults) -> None:
        self.device, self.dtype, self.threads = defaults

    def __enter__(self):
        self.before = (torch.get_default_device(), torch.get_default_dtype(), torch.get_num_threads())
        # Only a change: a default device set, even "cpu", puts a mode in front of every op.
        if self.device != self.before[0]:
            torch.set_default_device(self.device)
        if self.dtype != self.before[1]:
            torch.set_default_dtype(self.dtype)
        # Kept, not restored: the speed tests run on one thread there, and the idle threads of a
        # pool here would count as CPU time spent (they spin a while after each parallel op).
        if self.threads != self.before[2]:
            torch.set_num_threads(self.threads)

    def __exit__(self, *exc):
        if self.device != self.before[0]:
            torch.set_default_device(None if self.before[0] == torch.device("cpu") else self.before[0])
        if self.dtype != self.before[1]:
            torch.set_default_dtype(self.before[1])


class _recording:
    """What runs inside, as the request asks for the recorders open in T (grader.testing.forbid):
    its aten ops ("record": 0 none, 1 names, 2 names with dtypes) and the torch functions it
    calls ("functions": true or false)."""

    def __init__(self, request: dict) -> None:
        self.level, self.functions = request.get("record", 0), request.get("functions", False)
        self.recorders = []

    def __enter__(self):
        if self.level or self.functions:
            from grader.testing.forbid import _FunctionRecorder, _Recorder

            if self.level:
                self.recorders.append(_Recorder(dtypes=self.level > 1))
            if self.functions:
                self.recorders.append(_FunctionRecorder())
            for recorder in self.recorders:
                recorder.__enter__()
        return self

    def __exit__(self, *exc):
        for recorder in reversed(self.recorders):
            recorder.__exit__(*exc)


def _ops(recording: _recording | None) -> dict:
    """The reply's fields for what `recording` recorded: "ops", "functions", and "subclasses"
    (tensor subclasses whose own __torch_dispatch__ ran ops no recorder saw)."""
    from grader.testing.forbid import _Recorder

    found = {}
    for recorder in recording.recorders if recording is not None else ():
        if not isinstance(recorder, _Recorder):
            found["functions"] = sorted(recorder.names)
            continue
        if recorder.subclasses:
            found["subclasses"] = sorted(recorder.subclasses)
        if recorder.dtypes:
            found["ops"] = [[c.name, list(c.inputs), list(c.outputs)] for c in recorder.calls]
        else:
            found["ops"] = sorted(recorder.names)
    return found


def main(fd: int, memory: int) -> None:
    """Serve the connection on descriptor `fd`, with the shared memory `memory`, until it closes."""
    torch.set_num_threads(1)
    sock = socket.socket(fileno=fd)
    Server(sock, memory).serve()
    sys.exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
