"""T's side: the module under test as a stand-in whose functions call S (grader.remote.server).

`Connection` sends one request and reads its answer; `RemoteModule` is what the `lesson`
fixture hands the tests, a module whose functions are `RemoteFunction`s. What S answers is
data (grader.remote.wire): a result, the arguments it wrote into (copied back here, as an
in-place write would have left them), its aten ops (handed to grader.testing.forbid's open
recorders), a handle on its graph (a `_Remote` autograd.Function asks S for the gradients), or
an error, raised here as its built-in type with the learner's frames as its traceback.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import weakref
from pathlib import Path
from types import ModuleType

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils._python_dispatch import _disable_current_modes

from grader.remote import server, shared, wire
from grader.testing.forbid import OPEN, OpCall
from grader.testing.speed import EXCLUDED, TIMING

# The built-in exceptions an error of the code under test may be raised as here. Not
# BaseException's other children (SystemExit, KeyboardInterrupt, GeneratorExit): nothing S
# sends may end or steer this process; pytest's and hypothesis's own (skip, xfail) are not
# built-ins.
_RAISABLE = {name: t for name, t in vars(__import__("builtins")).items()
             if isinstance(t, type) and issubclass(t, Exception)}


COPIES = 32  # the most inputs one timed call runs on
BATCH_BYTES = 1 << 20  # ... while they hold at most this many bytes together


class Unremotable(AssertionError):
    """A test used something of the module under test that cannot cross to another process."""


class Gone(AssertionError):
    """S ended, or broke the protocol: the code under test can answer no more calls."""


class Connection:
    """One S: requests go out one at a time, and each gets its answer."""

    def __init__(self, sock: socket.socket, memory: int, process: subprocess.Popen | None = None) -> None:
        self.sock = sock
        self.shared = shared.Shared(memory)  # where timed calls' tensors go
        self.process = process  # S, when this process started it
        self.to_free: list[int] = []
        self.deadline: float | None = None  # time.monotonic() by which the test must end (set per test)
        self.gone: str | None = None
        self.last_decode = 0.0  # seconds the last answer took to read

    @classmethod
    def spawn(cls, cwd: Path) -> Connection:
        """An S of its own: a fresh Python process serving a socket pair (a learner-side or
        `kata verify` run with --kata-remote; class grading forks a sandboxed one instead)."""
        here, there = socket.socketpair()
        memory = shared.create()
        process = subprocess.Popen([sys.executable, "-m", server.__name__, str(there.fileno()), str(memory)],
                                   pass_fds=[there.fileno(), memory], cwd=cwd, stdin=subprocess.DEVNULL)
        there.close()
        return cls(here, memory, process)

    def close(self) -> None:
        self.sock.close()
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def request(self, message: dict, payload: bytes | None = None) -> dict:
        """Send `message` (or its `payload`, encoded already) and return S's answer."""
        __tracebackhide__ = True
        if self.gone:
            raise Gone(self.gone)
        if self.to_free:
            message = {**message, "free": self.to_free}
            payload, self.to_free = None, []
        try:
            with _disable_current_modes():  # moving data runs ops that are not the learner's
                if payload is None:
                    wire.send(self.sock, message)
                else:
                    self.sock.sendall(wire._LENGTH.pack(len(payload)) + payload)
                payload = wire.receive_payload(self.sock)
                started = time.perf_counter()
                reply = None if payload is None else wire.decode(payload)
                self.last_decode = time.perf_counter() - started
        except (wire.Broken, OSError) as exc:
            reply, why = None, str(exc)
        else:
            why = "it closed the connection"
        if type(reply) is not dict:
            self.gone = (f"The process running the code under test ended or broke the protocol ({why}); the "
                         "code called os._exit or sys.exit, crashed, or wrote to the tests' channel.")
            raise Gone(self.gone)
        if "error" in reply:
            raise_error(reply)
        return reply

    def left(self) -> float | None:
        """Seconds a call in S may take: what its test has left."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.05)

    def free(self, handle: int) -> None:
        self.to_free.append(handle)

    def load(self, root: Path, name: str, stem: str, tree: str, mutant: Path | None, file: Path | None,
             source: Path) -> RemoteModule:
        """The module under test, imported in S; its import error raised here."""
        return load(self, root, name, stem, tree, mutant, file, source)


def raise_error(reply: dict):
    """Raise S's error here: as its built-in type, with the learner's frames as its traceback."""
    __tracebackhide__ = True
    record = reply["error"]
    if not isinstance(record, dict):
        raise Gone("the process running the code under test sent an error that is not one")
    if reply.get("unremotable"):
        raise Unremotable(f"{record.get('message', '')}: the tests cannot check this result from another process")
    message, name = str(record.get("message", "")), str(record.get("name", ""))
    kind = _RAISABLE.get(record.get("type"), RuntimeError)
    if reply.get("timeout"):
        exc = TimeoutError("the call did not finish in its time limit")
        exc.kata_timeout = True
    elif kind is SyntaxError and isinstance(record.get("syntax"), list) and len(record["syntax"]) == 5:
        msg, filename, lineno, offset, text = record["syntax"]
        exc = SyntaxError(str(msg), (str(filename), int(lineno), int(offset), str(text)))
    else:
        exc = kind(message) if name == kind.__name__ else kind(f"{message}" if message else name)
        if kind is not RuntimeError and name != kind.__name__:
            exc.add_note(f"({name} in the code under test)")
    for note in record.get("notes", [])[:10]:
        exc.add_note(str(note))
    raise exc.with_traceback(_traceback(record.get("frames", [])))


def _traceback(frames):
    """A traceback whose entries are the learner's frames (file, line, function), made by raising
    from code compiled at that file and line, so every tool that reads frames reads them."""
    tb = None
    for entry in reversed(frames[-wire.MAX_FRAMES:]):
        try:
            filename, lineno, name = str(entry[0]), int(entry[1]), str(entry[2])
        except (TypeError, ValueError, IndexError):
            continue
        if not 0 < lineno < 1_000_000:
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


# --- the module and its functions ------------------------------------------------------------


class RemoteModule(ModuleType):
    """The module under test as the tests see it: its functions call S, its plain data is a copy."""

    def __init__(self, connection: Connection, key: int, name: str, file: str | None) -> None:
        super().__init__(name)
        self.__file__ = file
        self._kata_connection = connection
        self._kata_key = key

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name.startswith("__") or name.startswith("_kata_"):
            raise AttributeError(name)
        try:
            reply = self._kata_connection.request({"op": "get", "module": self._kata_key, "name": name})
        except AttributeError as exc:
            raise AttributeError(str(exc), name=name, obj=self) from None
        if reply.get("kind") == "function":
            function = RemoteFunction(self, name, str(reply.get("doc", "")))
            setattr(self, name, function)
            return function
        if reply.get("kind") == "value":
            return reply["value"]
        what = "class" if reply.get("is_class") else f"{reply.get('type')} object"
        raise Unremotable(f"{self.__name__}.{name} is a {what}: its tests drive it in the process it lives in, "
                          "so they cannot run while the code under test is kept in another one")


class RemoteFunction:
    def __init__(self, module: RemoteModule, name: str, doc: str) -> None:
        self.module, self.__name__, self.__qualname__, self.__doc__ = module, name, name, doc

    def __repr__(self) -> str:
        return f"<function {self.__name__} of {self.module.__name__}, in another process>"

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if isinstance(leaf, torch.Tensor)]
        if TIMING[0]:
            return self._timed(args, kwargs)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            holder = _Holder()
            outputs = _Remote.apply(self, holder, args, kwargs, *tensors)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            return holder.rebuild(outputs)
        reply = self.call(args, kwargs, tensors)
        return reply["value"]

    def call(self, args, kwargs, tensors, grad=None) -> dict:
        """S's answer to this call, the written-into arguments copied back and the ops handed on."""
        __tracebackhide__ = True
        try:
            message = {"op": "call", "module": self.module._kata_key, "name": self.__name__,
                       "args": wire.plain(args), "kwargs": wire.plain(kwargs),
                       "grad": grad or [False] * len(tensors), "record": _recording(),
                       "timeout": self.module._kata_connection.left(), "defaults": _defaults()}
        except TypeError as exc:
            raise Unremotable(f"{self.__name__}: {exc}; its tests cannot call it in another process") from None
        reply = self.module._kata_connection.request(message)
        _take_ops(reply.get("ops"))
        changed = reply.get("changed") or {}
        for index, value in changed.items():
            if isinstance(index, int) and 0 <= index < len(tensors) and type(value) is torch.Tensor:
                with torch.no_grad():
                    tensors[index].copy_(value)
        return reply

    def _timed(self, args, kwargs):
        """A call timed by speed.minimum_times. Its tensors go into memory S shares (`shared`)
        with fresh values (each storage's own values in a random order: memoising cannot help),
        written only when the call starts: S cannot have begun before. The time this counts is
        from the start message to the answer; the rest of this call is counted out."""
        __tracebackhide__ = True
        connection = self.module._kata_connection
        start = time.perf_counter()
        size = sum(t.untyped_storage().nbytes() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)
                   and t.device.type == "cpu")
        # Calls too short to time one at a time run `copies` times in a row, on as many fresh inputs.
        copies = max(1, min(COPIES, BATCH_BYTES // max(size, 1)))
        inputs = [_fresh((args, kwargs)) for _ in range(copies)]
        with _disable_current_modes():
            placed = connection.shared.place(inputs)
        if placed is None:  # larger than the shared memory: the arguments travel in the message
            return self.call(args, kwargs, [])["value"]
        inputs, write = placed
        connection.request({"op": "prepare", "module": self.module._kata_key, "name": self.__name__,
                            "inputs": inputs, "timeout": connection.left(), "defaults": _defaults()})
        with _disable_current_modes():
            go = wire.encode({"op": "go"})
            write()
        sent = time.perf_counter()
        reply = connection.request({}, go)
        answered = time.perf_counter()
        with _disable_current_modes():
            value = connection.shared.take(reply.get("value"))
            # What S's reading of "go" and writing of its answer cost, as this process pays them:
            # the time that is the protocol's, not the call's (S can shorten it, not the call).
            protocol = _cost(lambda: wire.decode(go)) + _cost(lambda: wire.encode(reply))
        window = ((answered - sent) - connection.last_decode - protocol) / copies
        EXCLUDED[0] += (time.perf_counter() - start) - window
        return value


class _Holder:
    """Where a gradient-tracking call keeps its result's structure (autograd.Function returns
    tensors only)."""

    def __init__(self) -> None:
        self.spec = None
        self.others: list = []

    def rebuild(self, tensors):
        leaves, tensors = list(self.others), iter(tensors)
        leaves = [next(tensors) if leaf is _TENSOR else leaf for leaf in leaves]
        return tree_unflatten(leaves, self.spec)


_TENSOR = object()


class _Remote(torch.autograd.Function):
    """A call of the code under test whose result tracks gradients: backward asks S."""

    @staticmethod
    def forward(ctx, function: RemoteFunction, holder: _Holder, args, kwargs, *tensors):
        reply = function.call(args, kwargs, list(tensors), grad=[t.requires_grad for t in tensors])
        leaves, holder.spec = tree_flatten(reply["value"])
        outputs = tuple(leaf for leaf in leaves if isinstance(leaf, torch.Tensor))
        holder.others = [_TENSOR if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        tracks = reply.get("tracks") or []
        ctx.function, ctx.handle = function, reply.get("handle")
        ctx.set_materialize_grads(False)
        if ctx.handle is not None:
            weakref.finalize(ctx, function.module._kata_connection.free, ctx.handle)
        else:
            tracks = []
        frozen = [o for i, o in enumerate(outputs) if not (i < len(tracks) and tracks[i])]
        if frozen:
            ctx.mark_non_differentiable(*frozen)
        ctx.count = len(tensors)
        return outputs if len(outputs) != 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        if ctx.handle is None:
            return (None, None, None, None, *([None] * ctx.count))
        connection = ctx.function.module._kata_connection
        reply = connection.request({"op": "backward", "handle": ctx.handle, "grads": [wire.plain(g) for g in grads],
                                    "record": _recording(), "timeout": connection.left()})
        _take_ops(reply.get("ops"))
        found = list(reply.get("grads") or [])[:ctx.count]
        found += [None] * (ctx.count - len(found))
        return (None, None, None, None, *(g if type(g) is torch.Tensor else None for g in found))


def _defaults() -> list:
    """torch's default device and dtype here, which a call in S runs under as it would here."""
    return [torch.get_default_device(), torch.get_default_dtype()]


def _cost(work) -> float:
    """Seconds `work()` takes here, the least of three."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def _recording() -> int:
    """What S should record of a call's ops for the recorders open here: 0, 1 names, 2 dtypes."""
    return max((2 if r.dtypes else 1 for r in OPEN), default=0)


def _take_ops(ops) -> None:
    if not ops or not OPEN:
        return
    calls = []
    for op in ops:
        if isinstance(op, str):
            calls.append(OpCall(op, (), ()))
        elif isinstance(op, list) and len(op) == 3 and isinstance(op[0], str):
            dtypes = [tuple(d for d in part if isinstance(d, torch.dtype)) for part in op[1:]]
            calls.append(OpCall(op[0], *dtypes))
    for recorder in OPEN:
        recorder.take(calls)


def _fresh(tree):
    """`tree` with each tensor's storage filled with its own values in a random order: the same
    shape, dtype, layout and multiset of values, as new data."""
    leaves, spec = tree_flatten(tree)
    fresh = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.device.type != "meta" and leaf.numel() > 1:
            storage = torch.empty(0, dtype=leaf.dtype, device="cpu").set_(leaf.detach().untyped_storage())
            shuffled = storage[torch.randperm(storage.numel())]
            leaf = torch.empty(0, dtype=leaf.dtype, device="cpu").set_(shuffled.untyped_storage(), leaf.storage_offset(),
                                                         leaf.shape, leaf.stride()).requires_grad_(leaf.requires_grad)
        fresh.append(leaf)
    return tree_unflatten(fresh, spec)


def load(connection: Connection, root: Path, name: str, stem: str, tree: str, mutant: Path | None,
         file: Path | None, source: Path) -> RemoteModule:
    """The module under test, imported in S; its import error raised here (grader.plugin.target)."""
    reply = connection.request({
        "op": "load", "root": str(root), "lesson": name, "stem": stem, "tree": tree,
        "mutant": str(mutant) if mutant else None, "file": str(file) if file else None,
        "roots": [str(p) for p in {source.parent, *([mutant.parent] if mutant else [])}],
    })
    return RemoteModule(connection, int(reply["module"]), f"{tree}.{name}.{stem}", str(source))

