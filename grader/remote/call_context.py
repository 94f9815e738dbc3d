"""What a call carries to the code process (S) besides its arguments, and what comes back
besides its value.

A call in S runs under torch's defaults here (`defaults`). It records the aten ops and torch
functions that the recorders of grader.testing.forbid open here want (`recording`), and what
it recorded is handed to them (`take_recorded`). What else watches calls here (a mode, a
profile function, a patched module) sees nothing of S's: `watcher` names it, and the call
refuses to run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from grader import running
from grader.remote.connection import Connection
from grader.remote.errors import Unremotable
from grader.testing.forbid import OpCall


def defaults() -> list:
    """torch's default device and dtype and its number of threads here, which a call in S runs
    under as it would here."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext

    # Read off the modes, not torch.get_default_device(): that builds a tensor to read a device
    # set without an index, an op that recorders open here would count as the call's.
    modes = [m for m in _get_current_function_mode_stack() if isinstance(m, DeviceContext)]
    device = modes[-1].device if modes else torch.device("cpu")
    return [device, torch.get_default_dtype(), torch.get_num_threads()]


def watcher() -> str | None:
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


def recording(connection: Connection, test: running.RunningTest | None) -> dict:
    """What S should record of a call for the recorders open in `test`: its aten ops ("record": 0
    none, 1 names, 2 dtypes) and the torch functions it calls ("functions"). None where S may
    make processes, whose ops no recorder there sees: the test cannot run so."""
    ops_recorders, function_recorders = _open(test)
    if connection.processes and (ops_recorders or function_recorders):
        raise Unremotable(
            "its ops were to be recorded in a process of the code's that may make processes, whose ops no recorder sees"
        )
    return {
        "record": max((2 if r.dtypes else 1 for r in ops_recorders), default=0),
        "functions": bool(function_recorders),
    }


def take_recorded(reply: dict, called: tuple[tuple[Path, ...], str] | None, test: running.RunningTest | None) -> None:
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
        running.note_review(
            f"{called[1] if called else 'a scenario'} ran ops through a tensor subclass's own __torch_dispatch__ "
            f"({', '.join(str(name) for name in subclasses[:3])}), under which no recorder sees what runs",
            test,
        )
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
