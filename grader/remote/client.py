"""T's side: the module under test as a stand-in whose functions call S (grader.remote.server).

`Connection` sends one request and reads its answer; `RemoteModule` is what the `lesson`
fixture hands the tests, a module whose functions are `RemoteFunction`s. What S answers is
data (grader.remote.wire): a result, which arguments it wrote into (none may be: the test fails
there, its own tensors as they were, whatever S did), its aten ops (handed to grader.testing.forbid's open
recorders), a handle on its graph (a `_Remote` autograd.Function asks S for the gradients), or
an error, raised here as its built-in type with the learner's frames as its traceback.
"""

from __future__ import annotations

import contextlib
import inspect
import linecache
import os
import random
import signal
import socket
import subprocess
import sys
import time
import weakref
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Iterator

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils._python_dispatch import _disable_current_modes

from grader import running
from grader.files import read_beneath
from grader.learners_code import load_file
from grader.remote import TIMEOUT_MARGIN, cputime, server, shared, wire
from grader.stand_ins import LoopReached
from grader.testing.compare import fail
from grader.testing.forbid import OpCall
from grader.testing.scenario import source_of
from grader.testing.source import reaching

# The built-in exceptions an error of the code under test may be raised as here. Not
# BaseException's other children (SystemExit, KeyboardInterrupt, GeneratorExit): nothing S
# sends may end or steer this process; pytest's and hypothesis's own (skip, xfail) are not
# built-ins.
_RAISABLE = MappingProxyType({name: t for name, t in vars(__import__("builtins")).items()
                              if isinstance(t, type) and issubclass(t, Exception)})


COPIES = 32  # the most inputs one timed call runs on
BATCH_BYTES = 1 << 20  # ... while they hold at most this many bytes together
THREADS_NOTED = 20_000  # ns of CPU in S's other threads during a call that earn a note (a thread's start alone: 70 us)
CHECKED = 4  # ... of whose results this many are checked against the kit's answer (`RemoteFunction._check`)
# Under class grading a function's first timed call, and then this share of them, drawn here where
# the code cannot see the draw, is made once more untimed with its ops recorded and compared with
# a plain call's (`RemoteFunction._compare_timed`): code that runs something else in n timed
# calls escapes with a chance of (2/3)^n (12 calls: under 1%; the red team's, round 4, waited for
# the first).
RECORDED_SHARE = 1 / 3
_ENTROPY = random.SystemRandom()  # not the random module's state, which every run forked from one parent shares


class Unremotable(AssertionError):
    """A test used something of the module under test that cannot cross to another process.
    The test is noted (grader.running.note_unremotable) even where it catches this."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        running.note_unremotable()


class Refused(AssertionError):
    """S could not read what the tests sent: the kit's error, not the learner's."""


class Gone(AssertionError):
    """S ended, or broke the protocol: the code under test can answer no more calls."""


class CodeClock:
    """What a speed test reads with the code under test in the code process (grader.running.Clock):
    this thread's CPU time, less what this process spent on each timed call (`excluded`), plus
    the CPU time the code process spent on it, as the kernel counts it (`code`, grader.remote.
    cputime). While `timing` is open, each call of the code under test is timed so
    (`RemoteFunction._timed`); both sides of a speed test are then measured by CPU time."""

    def __init__(self) -> None:
        self.timing_calls = False
        self.read = 0.0  # this thread's CPU time at the last reading
        self.excluded = 0.0
        self.code = 0.0

    def now(self) -> float:
        self.read = time.thread_time()
        return self.read - self.excluded + self.code

    @contextlib.contextmanager
    def timing(self) -> Iterator[None]:
        self.timing_calls = True
        try:
            yield
        finally:
            self.timing_calls = False


class Connection:
    """One S: requests go out one at a time, and each gets its answer."""

    def __init__(self, sock: socket.socket, memory: int, root: int | None, process: subprocess.Popen | None = None) -> None:
        self.sock = sock
        self.shared = shared.Shared(memory)  # where timed calls' tensors go
        self.root = root  # the process S is, or runs under: timed calls count its and its children's CPU time
        self.kit: Path | None = None  # the kit whose answers timed results are checked against (None: the tests' root)
        self.process = process  # S, when this process started it
        self.to_free: list[int] = []
        self.roots: tuple[Path, ...] = ()  # the folders of the learner's files: what an error's frames may name
        self.files_read: dict[str, Path] = {}  # those an error's frames named, read (`_learners_file`)
        self.deadline: float | None = None  # time.monotonic() by which the test must end (set per test)
        self.gone: str | None = None
        self.closed_by_s = False  # S's end of the connection closed while a call waited: S ended, as a rule
        # Seconds past a call's limit (`left`) that S may take to answer before it is stopped: less
        # than the margin S's limit leaves before the test's own, so the test still ends with its line.
        self.grace = TIMEOUT_MARGIN / 2
        self.overran = False  # S was stopped so
        self.go_frame = wire.encode({"op": "go"})
        self.read: set[Path] = set()  # the code's files read for what reaches past them (`_read_reaching`)
        self.watched: list[int] | None = None  # S's processes, whose threads `threads_watched` reads
        self.threaded: set[str] = set()  # the functions noted for work in another thread
        self.compared: set[str] = set()  # the functions a timed call of which had its ops compared with a call's
        # S may make processes (the tests that need them: grader.grading.sandbox): its children's
        # CPU time and ops may go unseen, so nothing is timed or recorded there.
        self.processes = False
        # Seconds of S's CPU a timed call costs the protocol: on one input, and for each more
        # (`calibrate`), measured where the session's tests time calls (`timing`).
        self.overhead: tuple[float, float] | None = None
        self.timing = True
        self.ahead: _Ahead | None = None  # the next timed call's inputs, written already
        # A loop's number (grader.plugin.loops) whose stand-in S is to put in place of the function
        # its call stopped by the limit was running, told with the next request: no request of its
        # own, which would fall past the stopped test's time limit.
        self.loop: int | None = None
        self.clock = CodeClock()  # what speed tests read (grader.testing.speed)

    @classmethod
    def spawn(cls, cwd: Path) -> Connection:
        """An S of its own: a fresh Python process serving a socket pair (a learner-side or
        `kata verify` run with --kata-remote; class grading forks a sandboxed one instead)."""
        here, there = socket.socketpair()
        memory = shared.create()
        process = subprocess.Popen([sys.executable, "-m", server.__name__, str(there.fileno()), str(memory)],
                                   pass_fds=[there.fileno(), memory], cwd=cwd, stdin=subprocess.DEVNULL)
        there.close()
        return cls(here, memory, process.pid, process)

    def wait_ready(self) -> None:
        """Wait for S to answer: a spawned S imports torch first (seconds), which no test's time
        limit should pay for."""
        self.request({"op": "ready"})

    def close(self) -> None:
        self.sock.close()
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def watching(self) -> bool:
        """Whether what the code does is watched for a person to read (`threads_watched`, timed
        calls' ops): under class grading, where notes are read (not in a learner's run, which
        started S itself), and not where S may make processes (a DataLoader's), whose work
        goes unseen."""
        return self.root is not None and self.process is None and not self.processes

    @contextlib.contextmanager
    def threads_watched(self, what: str):
        """Around a call of the code's: where S's processes spent CPU in threads the call started
        (a worker thread, which the checks watching the thread serving the call do not see:
        asyncio.to_thread, a pool made for it), a note for a person. A thread started earlier
        (torch's own, which may wake at any time) is left out: one the code starts at import is
        in what the source read flags (threading, asyncio, concurrent). Only while `watching`."""
        if not self.watching:
            yield
            return
        if self.watched is None:
            self.watched = cputime.processes(self.root)  # S, and the process it runs under: read once
        known = cputime.threads(self.watched)  # those alive before the call: what they spend is left out
        before = cputime.beside(self.watched, known)
        yield
        spent = cputime.beside(self.watched, known) - before
        if spent > THREADS_NOTED and what not in self.threaded:  # once a function: its first call that did
            self.threaded.add(what)
            running.note_review(f"{what} spent {spent / 1e6:.2g} ms of CPU in another thread during a call, out of the sight "
                        "of the checks that watch the thread it was called in")

    def request(self, message: dict, payload: bytes | None = None) -> dict:
        """Send `message` (or its `payload`, encoded already) and return S's answer."""
        __tracebackhide__ = True
        if self.gone:
            raise Gone(self.gone)
        self.ahead = None  # S's time from here on is not only a timed call's
        if self.to_free:
            message = {**message, "free": self.to_free}
            payload, self.to_free = None, []
        if self.loop is not None and "op" in message:
            message = {**message, "stand_in": self.loop}
            payload, self.loop = None, None
        # S stops a call at its limit with an alarm; code that switched the alarm off or blocks it
        # in C does not stop, and would hold every later test: stopped here, it answers no more.
        self.sock.settimeout(None if self.deadline is None else self.left() + self.grace)
        try:
            with _disable_current_modes():  # moving data runs ops that are not the learner's
                if payload is None:
                    wire.send(self.sock, message)
                else:
                    self.sock.sendall(wire._LENGTH.pack(len(payload)) + payload)
                payload = wire.receive_payload(self.sock)
                reply = None if payload is None else wire.decode(payload)
        except TimeoutError:
            self.stop()
            raise Gone(self.gone) from None
        except (wire.Broken, OSError) as exc:
            reply, why = None, str(exc)
        else:
            why = "it closed the connection"
            self.closed_by_s = payload is None
        if type(reply) is not dict:
            raise Gone(self.broke(why))
        if "error" in reply:
            raise_error(reply, self.roots, self.files_read)
        return reply

    def stop(self) -> None:
        """Stop S, and every process under it (its PID namespace's init among them), for good."""
        self.overran = True
        self.gone = ("The code under test ran past its time limit with the alarm that stops it switched off or "
                     "blocked; its process was stopped, and can answer no more calls.")
        if self.root is not None:
            for pid in reversed(cputime.processes(self.root)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def stand_in(self, key: int) -> None:
        """Have S replace the function its call stopped by the time limit was running by a stand-in
        that raises loop `key` at once (grader.stand_ins.stand_in), before the next request."""
        self.loop = key

    def broke(self, why: str) -> str:
        """S ended or broke the protocol (`why`): no more calls go to it. What to tell."""
        self.gone = (f"The process running the code under test ended or broke the protocol ({why}); the "
                     "code called os._exit or sys.exit, crashed, or wrote to the tests' channel.")
        return self.gone

    def left(self) -> float | None:
        """Seconds a call in S may take: what its test has left."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.05)

    def timed(self, module: int | None, name: str | None, args, kwargs, copies: int,
              record: bool = False) -> tuple[list, list, float, list] | None:
        """A timed call in S of `module.name` on `copies` fresh copies of the arguments: (its
        results, the inputs they are for, the seconds of CPU S's processes spent from the moment
        the inputs' values were written to its answer, and with `record` the names of the aten ops
        it ran), or None when they do not fit in the shared memory.

        The inputs of the call after it (the same arguments, as a timed loop makes) are written
        as soon as it ends, so that writing them has left the caches of S's processor before it
        is called, as a loop in one process runs on warm ones. S may see them early: all it
        spends from then on counts, whatever it spends it on (any request between ends that).
        """
        ahead = self.ahead
        if ahead is None or not ahead.matches(module, name, args, kwargs, copies):
            ahead = self._write_ahead(module, name, args, kwargs, copies)
            if ahead is None:
                return None
        reply = self.request({"op": "go", "record": 1} if record else {}, None if record else self.go_frame)
        after = cputime.sample(self.root)
        with _disable_current_modes():
            if "stacked" in reply:
                stacked = self.shared.take(reply["stacked"])
                values = list(stacked.unbind(0)) if type(stacked) is torch.Tensor and stacked.dim() else None
            else:
                values = self.shared.take(reply.get("values"))
        if type(values) is not list or len(values) != copies:
            raise ValueError("a timed call's answer is not one result per input")
        spent = cputime.spent(ahead.before, after)
        inputs = ahead.inputs
        self.ahead = self._write_ahead(module, name, args, kwargs, copies)
        ops = reply.get("ops") if record else None
        return values, inputs, spent, ops if isinstance(ops, list) else []

    def _write_ahead(self, module, name, args, kwargs, copies) -> _Ahead | None:
        with _disable_current_modes():
            fresh = [_fresh((args, kwargs)) for _ in range(copies)]
            placed = self.shared.place(fresh)
        if placed is None:
            return None
        inputs, write = placed
        self.request({"op": "prepare", "module": module, "name": name, "inputs": inputs, "timeout": self.left(),
                      "defaults": _defaults()})
        before = cputime.sample(self.root)
        with _disable_current_modes():
            write()
        return _Ahead(module, name, args, kwargs, copies, before, fresh)

    def calibrate(self, rounds: int = 30) -> None:
        """Measure the protocol's cost of a timed call, in CPU time of S: the least over `rounds`
        calls of a function that returns its input, on one input and on COPIES (each result
        crosses back), taken before any of the learner's code is in S, so that code cannot have
        made it larger. A timed call counts what it spends beyond this, and at most this much of
        S's time goes uncounted."""
        x = torch.zeros(1)
        one, most = (min(self.timed(None, None, (x,), {}, copies)[2] for _ in range(rounds)) for copies in (1, COPIES))
        self.overhead = (one, max(most - one, 0.0) / (COPIES - 1))
        self.ahead = None

    def cost(self, copies: int) -> float:
        """The protocol's cost of a timed call on `copies` inputs (`calibrate`)."""
        one, each = self.overhead
        return one + each * (copies - 1)

    def free(self, handle: int) -> None:
        self.to_free.append(handle)

    def load(self, root: Path, name: str, stem: str, tree: str, mutant: Path | None, file: Path | None,
             source: Path) -> RemoteModule:
        """The module under test, imported in S; its import error raised here."""
        return load(self, root, name, stem, tree, mutant, file, source)


def raise_error(reply: dict, roots: tuple[Path, ...] = (), read: dict[str, Path] | None = None):
    """Raise S's error here: as its built-in type, with the learner's frames as its traceback
    (only frames in files under `roots`, the learner's folders: `_learners_file`, which keeps
    in `read` those it read)."""
    __tracebackhide__ = True
    read = {} if read is None else read
    record = reply["error"]
    if not isinstance(record, dict):
        raise Gone("the process running the code under test sent an error that is not one")
    if reply.get("refused"):
        raise Refused(str(record.get("message", "")))
    if reply.get("unremotable"):
        raise Unremotable(f"{record.get('message', '')}: the tests cannot check this result from another process")
    message, name = str(record.get("message", "")), str(record.get("name", ""))
    kind = _RAISABLE.get(record.get("type"), RuntimeError)
    frames = record.get("frames", [])
    frames = frames if isinstance(frames, list) else []
    if type(reply.get("waiting")) is int:  # a function stopped in an earlier test's loop (grader.plugin.loops)
        raise LoopReached(reply["waiting"]).with_traceback(_traceback(frames, roots, read))
    if reply.get("timeout"):
        exc = TimeoutError("the call did not finish in its time limit")
        exc.kata_timeout = True
    elif kind is SyntaxError and isinstance(record.get("syntax"), list) and len(record["syntax"]) == 5:
        msg, filename, lineno, offset, text = record["syntax"]
        filename = str(filename) if _learners_file(str(filename), roots, read) else "<the code under test>"
        exc = SyntaxError(str(msg), (filename, int(lineno), int(offset), str(text)[:wire.MAX_TEXT]))
    else:
        exc = kind(message) if name == kind.__name__ else kind(f"{message}" if message else name)
        if kind is not RuntimeError and name != kind.__name__:
            exc.add_note(f"({name} in the code under test)")
        if isinstance(exc, OSError) and type(record.get("errno")) is int:
            exc.errno = record["errno"]
    for note in record.get("notes", [])[:10]:
        exc.add_note(str(note))
    raise exc.with_traceback(_traceback(frames, roots, read))


def _traceback(frames: list, roots: tuple[Path, ...], read: dict[str, Path]):
    """A traceback whose entries are the learner's frames (file, line, function), made by raising
    from code compiled at that file and line, so every tool that reads frames reads them. A
    frame whose file is not the learner's is left out: S names the files, and what reads a
    traceback here reads its files' lines (pytest's report among them)."""
    tb = None
    for entry in reversed(frames[-wire.MAX_FRAMES:]):
        try:
            filename, lineno, name = str(entry[0]), int(entry[1]), str(entry[2])
        except (TypeError, ValueError, IndexError):
            continue
        if not 0 < lineno < 1_000_000 or not _learners_file(filename, roots, read):
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


MAX_SOURCE = 1 << 20  # bytes of a learner's file read for its lines


def _learners_file(filename: str, roots: tuple[Path, ...], read: dict[str, Path] | None = None) -> bool:
    """Whether `filename`, named by S, is a regular file of the learner's, beneath one of
    `roots`; its lines are then read once, now, into linecache, where every reader of frames
    finds them and none opens the path again (S may change what it leads to meanwhile), and
    the folder it was read beneath kept in `read` (by the name S gave). Nothing else is opened
    for reading (grader.files.read_beneath): no link, FIFO or device, nothing outside the
    learner's folders."""
    read = {} if read is None else read
    if filename in read and filename in linecache.cache:  # read already, by this check
        return read[filename] in roots
    if not filename.startswith("/"):
        return False
    for root in roots:
        data = read_beneath(root, filename, MAX_SOURCE)
        if data is not None:
            break
    else:
        return False
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    linecache.cache[filename] = (len(data), None, lines, filename)  # no mtime: never read again from disk
    read[filename] = root
    return True


# --- the module and its functions ------------------------------------------------------------


class RemoteModule(ModuleType):
    """The module under test as the tests see it: its functions call S, its plain data is a copy."""

    def __init__(self, connection: Connection, key: int, name: str, file: str | None, reference=None,
                 sources: tuple[Path, ...] = ()) -> None:
        super().__init__(name)
        self.__file__ = file
        self._kata_sources = sources  # the files its definitions come from, later ones replacing earlier ones'
        self._kata_connection = connection
        self._kata_key = key
        self._kata_reference = reference  # the lesson's answer, imported here: what timed calls must return
        self._kata_touched: set[tuple[str, ...]] = set()  # names S said are not all untouched stubs

    def __getattr__(self, name: str):
        __tracebackhide__ = True
        if name.startswith("__") or name.startswith("_kata_"):
            raise AttributeError(name)
        try:
            reply = self._kata_connection.request({"op": "get", "module": self._kata_key, "name": name})
        except AttributeError as exc:
            raise AttributeError(str(exc), name=name, obj=self) from None
        if reply.get("kind") == "function":
            function = RemoteFunction(self, name, str(reply.get("doc", "")), reply.get("parameters"))
            setattr(self, name, function)
            return function
        if reply.get("kind") == "value":
            return reply["value"]
        what = "class" if reply.get("is_class") else f"{reply.get('type')} object"
        raise Unremotable(f"{self.__name__}.{name} is a {what}: its tests drive it in the process it lives in, "
                          "so they cannot run while the code under test is kept in another one")


    def _kata_first_stub(self, names: tuple[str, ...]):
        """Where the names are all untouched stubs in S (grader.plugin.untouched.first_stub), a
        function that builds the first there, raising its TODO here; else None."""
        connection = self._kata_connection
        message = {"op": "stub", "module": self._kata_key, "names": list(names)}
        # Asked once a session for names S answered so: the tests that use them then run in full,
        # as they would for any answer, so no answer of S's gains from this.
        if names in self._kata_touched:
            return None
        if not connection.request(message).get("untouched"):
            self._kata_touched.add(names)
            return None

        def stub() -> None:
            __tracebackhide__ = True
            connection.request({**message, "raise": True, "timeout": connection.left()})

        stub.__qualname__ = names[0]
        return stub

    def _kata_scenario(self, fn, args: tuple, kwargs: dict):
        """Run the scenario `fn` (grader.testing.scenario) in S, on this module there; what it returns."""
        __tracebackhide__ = True
        watcher = _watcher()
        if watcher is not None:
            raise Unremotable(f"the scenario {fn.__name__} was run under {watcher}, which watches the calls made in "
                              "this process: its test cannot run while the code under test is kept in another one")
        connection, test = self._kata_connection, running.current()
        try:
            message = {"op": "scenario", "module": self._kata_key, "file": fn.__code__.co_filename, "name": fn.__name__,
                       "source": source_of(fn),  # what of its test file S runs; S does not see the file
                       "args": wire.plain(args), "kwargs": wire.plain(kwargs), **_recording(connection, test),
                       "timeout": connection.left(), "defaults": _defaults()}
        except TypeError as exc:  # the kit's test, not the learner's code: say so, do not fall back
            raise TypeError(f"the scenario {fn.__name__} takes data only (a name, not a function or an object): {exc}") \
                from None
        with connection.threads_watched(f"the scenario {fn.__name__}"):
            reply = connection.request(message)
        try:
            value = wire.with_views(reply.get("value"), [])
        except wire.Broken as exc:
            raise Gone(connection.broke(str(exc))) from None
        _take_recorded(reply, None, test)
        return value


class RemoteFunction:
    def __init__(self, module: RemoteModule, name: str, doc: str, parameters: list | None = None) -> None:
        self.module, self.__name__, self.__qualname__, self.__doc__ = module, name, name, doc
        self._signature = _signature(parameters)

    @property
    def __signature__(self) -> inspect.Signature:
        """What inspect.signature answers: the function's own, as S described it."""
        if self._signature is None:
            raise Unremotable(f"{self.__name__}'s signature did not cross from the process it lives in (a default "
                              "that is not data): its tests cannot read it there")
        return self._signature

    def __repr__(self) -> str:
        return f"<function {self.__name__} of {self.module.__name__}, in another process>"

    @property
    def called(self) -> tuple[tuple[Path, ...], str]:
        """What a recorder notes of a call of this (grader.testing.forbid): the files its module comes from, its name."""
        return self.module._kata_sources, self.__name__

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        if self.module._kata_connection.clock.timing_calls:
            return self._timed(args, kwargs)
        watcher = _watcher()
        if watcher is not None:
            raise Unremotable(f"{self.__name__} was called under {watcher}, which watches the calls made in this "
                              "process: its test cannot run while the code under test is kept in another one")
        tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if isinstance(leaf, torch.Tensor)]
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            holder = _Holder()
            outputs = _Remote.apply(self, holder, args, kwargs, *tensors)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            return holder.rebuild(outputs)
        reply = self.call(args, kwargs, tensors)
        return reply["value"]

    def call(self, args, kwargs, tensors, grad=None, record: int | None = None) -> dict:
        """S's answer to this call, its ops handed on to the running test's recorders; a failure
        where it wrote into an argument. `record`: the ops to record whatever recorders are open
        here (as `_recording` counts)."""
        __tracebackhide__ = True
        test = running.current()
        try:
            message = {"op": "call", "module": self.module._kata_key, "name": self.__name__,
                       "args": wire.plain(args), "kwargs": wire.plain(kwargs),
                       "grad": grad or [False] * len(tensors), **_recording(self.module._kata_connection, test),
                       **({"record": record} if record is not None else {}),
                       "timeout": self.module._kata_connection.left(), "defaults": _defaults()}
        except TypeError as exc:
            raise Unremotable(f"{self.__name__}: {exc}; its tests cannot call it in another process") from None
        with self.module._kata_connection.threads_watched(self.__name__):
            reply = self.module._kata_connection.request(message)
        try:
            reply["value"] = wire.with_views(reply.get("value"), tensors)
        except wire.Broken as exc:
            raise Gone(self.module._kata_connection.broke(str(exc))) from None
        _take_recorded(reply, self.called, test)
        if reply.get("changed"):  # no lesson's function may: its test fails here, its inputs kept as they were
            fail(f"{self.__name__}() wrote into {self._argument(args, kwargs, tensors, reply['changed'])} in place: "
                 "the caller's tensors must stay as they were; compute a new tensor instead of writing into an input.")
        return reply

    def _argument(self, args, kwargs, tensors, changed) -> str:
        """The argument S said it wrote into, by its parameter's name where the call gave it
        whole ("its argument x"), else by its place among the call's tensors."""
        index = min((i for i in changed if isinstance(i, int)), default=0)
        written = tensors[index] if 0 <= index < len(tensors) else None
        try:
            bound = self.__signature__.bind(*args, **kwargs).arguments
        except (TypeError, Unremotable):
            bound = {}
        name = next((name for name, value in bound.items() if value is written), None)
        return f"its argument {name}" if name else f"its tensor argument {index + 1}"

    def _timed(self, args, kwargs):
        """A call timed by speed.minimum_times, by the CPU time S's processes spend on it
        (grader.remote.cputime), nothing of this process's counted. Its tensors go into memory S
        shares (`shared`) with fresh values (each storage's own values in a random order:
        memoising cannot help), written only after the clocks are read: S cannot have begun
        before. All S does until its answer counts, its reading of the message and its writing
        of the result included."""
        __tracebackhide__ = True
        connection = self.module._kata_connection
        clock = connection.clock
        start = clock.read  # this process's time from the clock's reading before this call is counted out
        if connection.processes:
            raise Unremotable(f"{self.__name__} was timed in a process of the code's that may make processes, whose "
                              "CPU time the kernel may count for nobody")
        if connection.overhead is None:  # not measured, and it cannot be now: the learner's code is in S
            raise RuntimeError("a call was timed in a test not marked speed (@pytest.mark.speed): the protocol's "
                               "cost is measured before the code under test is loaded, where such tests run")
        size = sum(t.untyped_storage().nbytes() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)
                   and t.device.type == "cpu")
        # Calls too short to time one at a time run `copies` times in a row, on as many fresh inputs.
        copies = max(1, min(COPIES, BATCH_BYTES // max(size, 1)))
        if connection.watching:  # a speed test's pass rests on the comparison, made on any of its calls
            running.note_recorded()
            if self.__name__ not in connection.compared or _ENTROPY.random() < RECORDED_SHARE:
                connection.compared.add(self.__name__)
                self._compare_timed(args, kwargs, copies)
        timed = connection.timed(self.module._kata_key, self.__name__, args, kwargs, copies)
        if timed is None:  # larger than the shared memory: the arguments travel in the message
            before = cputime.sample(connection.root)
            value = self.call(args, kwargs, [])["value"]
            timed, copies = ([value], [(args, kwargs)], cputime.spent(before, cputime.sample(connection.root)), []), 1
        values, inputs, spent, _ = timed
        self._check(values, inputs)
        value = values[-1]
        del timed, values, inputs  # freed here, in the time counted out, not on return
        # Less the protocol's own cost (`Connection.calibrate`): what a clean S spends around a call.
        clock.code += max(spent - connection.cost(copies), 0.0) / copies
        clock.excluded += time.thread_time() - start
        return value

    def _compare_timed(self, args, kwargs, copies: int) -> None:
        """A timed call looks like any other to the code (fresh inputs of their own size), but
        code that tells one apart could run there what its tests forbid, fast. So a timed call
        (`RECORDED_SHARE`), untimed here, records the ops it ran, and so does a plain call on
        fresh inputs of the same shape: other ops, for a person to read (a speed test's pass
        rests on this record, which S made)."""
        timed = self.module._kata_connection.timed(self.module._kata_key, self.__name__, args, kwargs, copies,
                                                   record=True)
        if timed is None:  # larger than the shared memory: it travels as a plain call does
            return
        fresh = _fresh((args, kwargs))
        plain = self.call(fresh[0], fresh[1], [leaf for leaf in tree_flatten(fresh)[0] if isinstance(leaf, torch.Tensor)],
                          record=1)
        when_timed, when_called = _op_names(timed[3]), _op_names(plain.get("ops"))
        if when_timed != when_called:
            only = sorted(when_timed - when_called)[:5], sorted(when_called - when_timed)[:5]
            running.note_review(f"{self.__name__} ran other ops when timed than when called on inputs of the same shape "
                        f"(only when timed: {', '.join(only[0]) or 'none'}; only when called: {', '.join(only[1]) or 'none'})")

    def _check(self, values: list, inputs: list) -> None:
        """Timed results are the kit's answer's on their inputs (loosely: summing in another
        order is not wrong). A timed call is otherwise unchecked, and a result kept from an
        earlier call, or one made up, would make any code fast.

        CHECKED of a call's results are checked, drawn from the system's entropy once they are
        here, where S cannot see which. Results made up for a share f of the inputs save at most
        that share of S's time (a speed-up of 1/(1 - f)), and go unseen through the ~12 timed
        calls of a speed test with a chance of (1 - f)^(12 * CHECKED) at most: under 1e-5 for
        f = 1/4, a speed-up of 1.33x. Checking each of up to COPIES results cost more than the
        calls themselves (lesson 03: 0.45 s of its speed test's 1.1 s)."""
        __tracebackhide__ = True
        reference = getattr(self.module._kata_reference, self.__name__, None)
        if reference is None:
            return
        picked = sorted(_ENTROPY.sample(range(len(values)), min(CHECKED, len(values))))
        for value, (args, kwargs) in ((values[i], inputs[i]) for i in picked):
            with _disable_current_modes():
                expected = reference(*args, **kwargs)
            try:
                torch.testing.assert_close(value, expected, rtol=1e-3, atol=1e-3, equal_nan=True, check_dtype=False)
            except (AssertionError, TypeError, ValueError) as exc:
                raise AssertionError(
                    f"{self.__name__} gave a wrong answer in a speed test, on inputs of fresh values (an answer "
                    f"kept from an earlier call cannot be used):\n{exc}") from None


class _Ahead:
    """A timed call's inputs written ahead, and S's clocks read before they were."""

    def __init__(self, module, name, args, kwargs, copies: int, before: dict[int, int], inputs: list) -> None:
        self.call = (module, name, copies)
        self.inputs = inputs  # [(args, kwargs)] with the values written
        self.leaves, self.spec = tree_flatten((args, kwargs))  # held: no id is reused meanwhile
        self.versions = [leaf._version if isinstance(leaf, torch.Tensor) else None for leaf in self.leaves]
        self.before = before

    def matches(self, module, name, args, kwargs, copies: int) -> bool:
        """Whether a call is on the same arguments, none of them changed since."""
        leaves, spec = tree_flatten((args, kwargs))
        if (module, name, copies) != self.call or spec != self.spec or len(leaves) != len(self.leaves):
            return False
        for new, old, version in zip(leaves, self.leaves, self.versions):
            if isinstance(old, torch.Tensor):
                if new is not old or new._version != version:
                    return False
            elif type(new) is not type(old) or new != old:
                return False
        return True


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
        # Backward may run in another thread (autograd's for a device), where the running test is not
        # set: it is taken here, in the test's.
        ctx.function, ctx.handle, ctx.test = function, reply.get("handle"), running.current()
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
                                    **_recording(connection, ctx.test), "timeout": connection.left()})
        _take_recorded(reply, ctx.function.called, ctx.test)
        found = list(reply.get("grads") or [])[:ctx.count]
        found += [None] * (ctx.count - len(found))
        return (None, None, None, None, *(g if type(g) is torch.Tensor else None for g in found))


def _defaults() -> list:
    """torch's default device and dtype and its number of threads here, which a call in S runs
    under as it would here."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext

    # Read off the modes, not torch.get_default_device(): that builds a tensor to read a device
    # set without an index, an op that recorders open here would count as the call's.
    modes = [m for m in _get_current_function_mode_stack() if isinstance(m, DeviceContext)]
    device = modes[-1].device if modes else torch.device("cpu")
    return [device, torch.get_default_dtype(), torch.get_num_threads()]


def _signature(parameters) -> inspect.Signature | None:
    """The signature S described (server._parameters); None where it did not, or the description
    is no signature (a name that is not one, an order Python refuses)."""
    if parameters is None:
        return None
    try:
        return inspect.Signature([inspect.Parameter(p[0], inspect._ParameterKind(p[1]),
                                                    **({"default": p[2]} if len(p) == 3 else {}))
                                  for p in parameters])
    except (TypeError, ValueError, LookupError):  # (S's answer is data of any shape)
        return None


def _watcher() -> str | None:
    """What watches the calls made here, if anything: a mode open here (a test's own
    TorchFunctionMode or TorchDispatchMode), whose view of the calls S makes nothing here can give; None when the
    only ones open are a default device's and grader.testing.forbid's recorders, which what S
    records is handed to. A profile function (sys.setprofile) watches calls too, and so does a
    module's attribute the test patched (``monkeypatch.setattr(torch, "finfo", ...)``): S has
    its own modules, unpatched."""
    if sys.getprofile() is not None:
        return "a profile function (sys.setprofile)"
    test = running.current()
    if test is not None and (patched := test.patched_modules()):
        return f"the test's patch of {patched[0]}"
    ops_recorders, function_recorders = _open(test)
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    for mode in _get_current_function_mode_stack():
        if not isinstance(mode, DeviceContext) and not any(mode is recorder for recorder in function_recorders):
            return type(mode).__qualname__
    for mode in _get_current_dispatch_mode_stack():
        if not any(mode is recorder for recorder in ops_recorders):
            return type(mode).__qualname__
    return None


def _open(test: running.RunningTest | None) -> tuple[list, list]:
    """The recorders of grader.testing.forbid open in `test`: (the ops', the functions')."""
    return (test.ops_recorders, test.function_recorders) if test is not None else ([], [])


def _recording(connection: Connection, test: running.RunningTest | None) -> dict:
    """What S should record of a call for the recorders open in `test`: its aten ops ("record": 0
    none, 1 names, 2 dtypes) and the torch functions it calls ("functions"). None where S may
    make processes, whose ops no recorder there sees: the test cannot run so."""
    ops_recorders, function_recorders = _open(test)
    if connection.processes and (ops_recorders or function_recorders):
        raise Unremotable("its ops were to be recorded in a process of the code's that may make processes, "
                          "whose ops no recorder sees")
    return {"record": max((2 if r.dtypes else 1 for r in ops_recorders), default=0),
            "functions": bool(function_recorders)}


def _op_names(ops) -> set[str]:
    """The names in what S sent as a call's ops (anything)."""
    return {op for op in ops if isinstance(op, str)} if isinstance(ops, list) else set()


def _take_recorded(reply: dict, called: tuple[tuple[Path, ...], str] | None, test: running.RunningTest | None) -> None:
    """Hand what S recorded of a call of `called` (its module's files, its name; None: a
    scenario's, which calls what it likes) to the recorders open in `test`. A verdict that rests
    on it (`_Recorder.judges`), or on a scenario's result, rests on S's word: the test is noted
    (grader.running.note_recorded)."""
    ops_recorders, function_recorders = _open(test)
    if called is None or function_recorders or any(recorder.judges for recorder in ops_recorders):
        running.note_recorded(test)
    ops, functions, subclasses = reply.get("ops"), reply.get("functions"), reply.get("subclasses")
    ops = ops if isinstance(ops, list) else []  # what S sent: anything
    if isinstance(subclasses, list) and subclasses:
        running.note_review(f"{called[1] if called else 'a scenario'} ran ops through a tensor subclass's own __torch_dispatch__ "
                    f"({', '.join(str(name) for name in subclasses[:3])}), under which no recorder sees what runs",
                            test)
    if ops_recorders:
        calls = []
        for op in ops:
            if isinstance(op, str):
                calls.append(OpCall(op, (), ()))
            elif isinstance(op, list) and len(op) == 3 and isinstance(op[0], str):
                dtypes = [tuple(d for d in part if isinstance(d, torch.dtype)) for part in op[1:]]
                calls.append(OpCall(op[0], *dtypes))
        for recorder in ops_recorders:
            recorder.take(calls, called)
    if isinstance(functions, list) and function_recorders:
        for recorder in function_recorders:
            recorder.take([name for name in functions if isinstance(name, str)])


def _fresh(tree):
    """`tree` with each tensor's storage filled with its own values in a random order: the same
    shape, dtype, layout and multiset of values, as new data."""
    leaves, spec = tree_flatten(tree)
    fresh = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.device.type != "meta" and leaf.numel() > 1:
            storage = torch.empty(0, dtype=leaf.dtype, device="cpu").set_(leaf.detach().untyped_storage())
            shuffled = _shuffled(storage)
            leaf = torch.empty(0, dtype=leaf.dtype, device="cpu").set_(shuffled.untyped_storage(), leaf.storage_offset(),
                                                         leaf.shape, leaf.stride()).requires_grad_(leaf.requires_grad)
        fresh.append(leaf)
    return tree_unflatten(fresh, spec)


SHUFFLE_BLOCK = 4096  # elements: larger storages are shuffled by blocks, at the speed of a copy


def _shuffled(values: torch.Tensor) -> torch.Tensor:
    """The 1-d `values` in a random order. A large one's blocks of SHUFFLE_BLOCK are put in a
    random order and the whole is then turned by a random offset, which moves the blocks'
    edges: a random permutation of every element reads memory at random, and cost 0.55 s for
    the 8M elements of a timed call of lesson 05, where this costs two copies (13 ms; the
    gather, then the turn as one `cat` of slices: a `cat` and a `roll` took 35 ms)."""
    n = values.numel()
    if n <= 16 * SHUFFLE_BLOCK:
        return values[torch.randperm(n)]
    blocks = n // SHUFFLE_BLOCK
    head = values[:blocks * SHUFFLE_BLOCK].view(blocks, SHUFFLE_BLOCK)[torch.randperm(blocks)].view(-1)
    whole = (head, values[blocks * SHUFFLE_BLOCK:])  # head then the rest, turned by `turn`: one copy, not two
    turn = int(torch.randint(1, n, ()))
    return torch.cat([*_slice(whole, n - turn, n), *_slice(whole, 0, n - turn)])


def _slice(parts: tuple[torch.Tensor, ...], start: int, stop: int) -> list[torch.Tensor]:
    """The elements start:stop of the 1-d `parts` laid end to end, as views of them."""
    views, at = [], 0
    for part in parts:
        low, high = max(start - at, 0), min(stop - at, part.numel())
        if low < high:
            views.append(part[low:high])
        at += part.numel()
    return views


def load(connection: Connection, root: Path, name: str, stem: str, tree: str, mutant: Path | None,
         file: Path | None, source: Path) -> RemoteModule:
    """The module under test, imported in S; its import error raised here (grader.plugin.target
    makes it a NotImportable)."""
    if connection.overhead is None and connection.timing:  # before anything of the learner's is in S
        connection.calibrate()
    roots = {source.parent, *([mutant.parent] if mutant else [])}
    # S names a file as it was given its path, or resolved: beneath either form (read_beneath
    # walks from the root by name, so a name's own form decides where it may lead)
    connection.roots = tuple(dict.fromkeys([*(p.absolute() for p in roots), *(p.resolve() for p in roots)]))
    reply = connection.request({
        "op": "load", "root": str(root), "lesson": name, "stem": stem, "tree": tree,
        "mutant": str(mutant) if mutant else None, "file": str(file) if file else None,
        "roots": [str(p) for p in roots], "timeout": connection.left(),  # a loop at import time is the test's
    })
    answer = sorted(((connection.kit or root) / "solutions" / name).glob("*.py"))  # none in a learner's copy
    _read_reaching(connection, [*sorted(source.parent.glob("*.py")), *([mutant] if mutant else [])], answer)
    return RemoteModule(connection, int(reply["module"]), f"{tree}.{name}.{stem}", str(source),
                        _reference(connection.kit or root, name, stem), (source, *([mutant] if mutant else [])))


def _read_reaching(connection: Connection, files: list[Path], answer: list[Path]) -> None:
    """Read the code's files, each once, for what reaches past its own code to act on the
    checks, and for what the lesson's `answer` does not need (grader.testing.source.reaching):
    what such a run shows of itself may be a lie, so the lesson is flagged for a person to read."""
    files = [file for file in files if file not in connection.read]
    connection.read.update(files)
    if found := reaching(files, answer):
        where = ", ".join(f"{Path(s.file).name}:{s.line} {s.word}" for s in found[:3])
        running.note_review(f"the source reaches past what its answer needs ({where}{', ...' if len(found) > 3 else ''}): "
                    "an import, a private attribute, a name looked up at run time, another's object changed, frames, "
                    "the grader or threads; what its run showed may not be what it did")


def _reference(root: Path, name: str, stem: str) -> ModuleType | None:
    """The kit's answer to the lesson, imported in this process (trusted code) from its file, or
    None where the kit has none (a learner's copy)."""
    source = root / "solutions" / name / f"{stem}.py"
    return load_file(f"_kata_reference.{name}.{stem}", source) if source.is_file() else None

