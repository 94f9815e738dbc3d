"""The module under test as the tests see it: a stand-in whose functions call the code process.

The `lesson` fixture hands the tests a `RemoteModule` (grader.remote.loading makes it). Its
functions are `RemoteFunction`s; its plain data is a copy. A call sends its arguments as data
(grader.remote.wire) and gets back a result, which arguments S wrote into (none may be: the test
fails there, its own tensors as they were), and its ops (grader.remote.call_context). A call whose
inputs track gradients goes through grader.remote.autograd; a call while a speed test times is
grader.remote.timed's. What cannot cross fails the test with `Unremotable`.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType

import torch
from torch.utils._pytree import tree_flatten

from grader import running
from grader.remote import timed, wire
from grader.remote.autograd import call_tracking
from grader.remote.call_context import defaults, recording, take_recorded, watcher
from grader.remote.connection import Connection
from grader.remote.errors import Gone, Unremotable
from grader.testing.compare import fail
from grader.testing.scenario import source_of


class RemoteModule(ModuleType):
    """The module under test as the tests see it: its functions call S, its plain data is a copy."""

    def __init__(
        self,
        connection: Connection,
        key: int,
        name: str,
        file: str | None,
        reference=None,
        sources: tuple[Path, ...] = (),
    ) -> None:
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
        raise Unremotable(
            f"{self.__name__}.{name} is a {what}: its tests drive it in the process it lives in, "
            "so they cannot run while the code under test is kept in another one"
        )

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
        watching = watcher()
        if watching is not None:
            raise Unremotable(
                f"the scenario {fn.__name__} was run under {watching}, which watches the calls made in "
                "this process: its test cannot run while the code under test is kept in another one"
            )
        connection, test = self._kata_connection, running.current()
        try:
            message = {
                "op": "scenario",
                "module": self._kata_key,
                "file": fn.__code__.co_filename,
                "name": fn.__name__,
                "source": source_of(fn),  # what of its test file S runs; S does not see the file
                "args": wire.plain(args),
                "kwargs": wire.plain(kwargs),
                **recording(connection, test),
                "timeout": connection.left(),
                "defaults": defaults(),
            }
        except TypeError as exc:  # the kit's test, not the learner's code: say so, do not fall back
            raise TypeError(
                f"the scenario {fn.__name__} takes data only (a name, not a function or an object): {exc}"
            ) from None
        with connection.threads_watched(f"the scenario {fn.__name__}"):
            reply = connection.request(message)
        try:
            value = wire.with_views(reply.get("value"), [])
        except wire.Broken as exc:
            raise Gone(connection.broke(str(exc))) from None
        take_recorded(reply, None, test)
        return value


class RemoteFunction:
    """A function of the module under test: a call sends its arguments to S and returns S's
    answer (its own docstring, S's, replaces this one on each instance)."""

    def __init__(self, module: RemoteModule, name: str, doc: str, parameters: list | None = None) -> None:
        self.module, self.__name__, self.__qualname__, self.__doc__ = module, name, name, doc
        self._signature = _signature(parameters)

    @property
    def __signature__(self) -> inspect.Signature:
        """What inspect.signature answers: the function's own, as S described it."""
        if self._signature is None:
            raise Unremotable(
                f"{self.__name__}'s signature did not cross from the process it lives in (a default "
                "that is not data): its tests cannot read it there"
            )
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
            return timed.call(self, args, kwargs)
        watching = watcher()
        if watching is not None:
            raise Unremotable(
                f"{self.__name__} was called under {watching}, which watches the calls made in this "
                "process: its test cannot run while the code under test is kept in another one"
            )
        tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if isinstance(leaf, torch.Tensor)]
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return call_tracking(self, args, kwargs, tensors)
        reply = self.call(args, kwargs, tensors)
        return reply["value"]

    def call(self, args, kwargs, tensors, grad=None, record: int | None = None) -> dict:
        """S's answer to this call, its ops handed on to the running test's recorders; a failure
        where it wrote into an argument. `record`: the ops to record whatever recorders are open
        here (as call_context.recording counts)."""
        __tracebackhide__ = True
        test = running.current()
        try:
            message = {
                "op": "call",
                "module": self.module._kata_key,
                "name": self.__name__,
                "args": wire.plain(args),
                "kwargs": wire.plain(kwargs),
                "grad": grad or [False] * len(tensors),
                **recording(self.module._kata_connection, test),
                **({"record": record} if record is not None else {}),
                "timeout": self.module._kata_connection.left(),
                "defaults": defaults(),
            }
        except TypeError as exc:
            raise Unremotable(f"{self.__name__}: {exc}; its tests cannot call it in another process") from None
        with self.module._kata_connection.threads_watched(self.__name__):
            reply = self.module._kata_connection.request(message)
        try:
            reply["value"] = wire.with_views(reply.get("value"), tensors)
        except wire.Broken as exc:
            raise Gone(self.module._kata_connection.broke(str(exc))) from None
        take_recorded(reply, self.called, test)
        if reply.get("changed"):  # no lesson's function may: its test fails here, its inputs kept as they were
            fail(
                f"{self.__name__}() wrote into {self._argument(args, kwargs, tensors, reply['changed'])} in place: "
                "the caller's tensors must stay as they were; compute a new tensor instead of writing into an input."
            )
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


def _signature(parameters) -> inspect.Signature | None:
    """The signature S described (server._parameters); None where it did not, or the description
    is no signature (a name that is not one, an order Python refuses)."""
    if parameters is None:
        return None
    try:
        return inspect.Signature(
            [
                inspect.Parameter(p[0], inspect._ParameterKind(p[1]), **({"default": p[2]} if len(p) == 3 else {}))
                for p in parameters
            ]
        )
    except (TypeError, ValueError, LookupError):  # (S's answer is data of any shape)
        return None
