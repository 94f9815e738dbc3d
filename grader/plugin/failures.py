"""Every failure recorded as data when its report is made, and told the way the learner can act on.

`diagnose` looks at the exception itself (its type, its traceback's frames), never at text:

- a Todo (grader.plugin.todo) or a module that could not be imported: the kit's one-line message;
- a test stopped by its time limit: TIMEOUT, with the learner's line it was running; a test
  that reached a function an earlier test's loop stopped (grader.plugin.loops): TIMEOUT, that
  loop's line and test;
- code that asked for CUDA on a machine without it: how to write device-agnostic code;
- a name the tests use that the learner's module lacks: keep the stub's names;
- MemoryError, and a write past the file-size limit (EFBIG): kinds class grading reports on;
- a test's own AssertionError with a message (assert_close's, or ``assert ok, message``): that
  message alone, without pytest's introspection of the assert;
- a test's own ``pytest.fail(message, pytrace=False)``: that message alone, never the error it
  was handling (pytest would print that error and a "During handling..." banner above it);
- an error raised in the learner's code: the learner's frames (from a DataLoader worker too)
  and the error, never the frames of the tests, the kit or the libraries in between;
- any other error: the error alone, without the frames of the tests or the kit.

An error's own text is cut to the line a learner reads (grader.quoting): a library's page of
overloads or its advice on debugging tools stays out.

So every failure is told in one style, the kit's: no frame of tests/ or grader/ and no chained
exception reaches the learner. A property test's failing example follows the message, on one line
(left out when it is too large to read there).

The result rides on the report as ``report.kata_failure`` (a grader.results.Failure), where
the recorder and the terminal summary read it.
"""

from __future__ import annotations

import errno
import linecache
import re
import sys
from pathlib import Path

import pytest

from grader import pitfalls
from grader.learners_code import is_learners
from grader.plugin.loops import TIMEOUT_S, timed_out, waiting
from grader.plugin.target import NotImportable, code_of, frames, innermost, shown, target, where
from grader.plugin.todo import Todo, worker_traceback
from grader.quoting import error_line, repeats
from grader.results import Failure, Kind
from grader.stand_ins import LoopReached


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    report.kata_failure = None
    if call.excinfo is not None and report.skipped and isinstance(call.excinfo.value, pytest.skip.Exception):
        frame = _last_frame_in(call.excinfo.value, code_of(item))
        if frame is not None:  # a test counts for its points only where the kit skips it, not the learner
            at = where(frame, item.config)
            message = (
                f"{item.name} was skipped by the code under test ({shown(frame, item.config)}), and a test "
                f"the code skips counts as failed: finish the code instead of skipping its test."
            )
            report.outcome, report.longrepr = "failed", message
            report.kata_failure = Failure(None, "Skipped", message, at)
    if call.excinfo is not None and report.failed and report.kata_failure is None:
        failure, message = diagnose(item, call.excinfo)
        report.kata_failure = failure
        if message is not None:
            report.longrepr = message
    return report


# A report crosses between processes as data where pytest-xdist runs the tests (the kit's own
# suite, README's test command): its failure goes as JSON and comes back as itself.
@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report):
    data = yield
    if isinstance(data, dict) and isinstance(failure := data.get("kata_failure"), Failure):
        data["kata_failure"] = failure.to_json()
    return data


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict):
    report = yield
    if isinstance(failure := getattr(report, "kata_failure", None), dict):
        report.kata_failure = Failure.from_json(failure)
    return report


def diagnose(item: pytest.Item, excinfo: pytest.ExceptionInfo) -> tuple[Failure, str | None]:
    """(the failure as data, the kit's message to show instead of pytest's, or None)."""
    exc, code, config = excinfo.value, code_of(item), item.config
    exception = type(exc).__name__
    if isinstance(exc, Todo):  # the kit's own: it knows where (an untouched lesson fails this way throughout)
        return Failure(Kind.TODO, "NotImplementedError", exc.msg, exc.where), exc.msg
    if isinstance(exc, LoopReached):  # a function an earlier test's loop stopped (grader.plugin.loops)
        found = waiting(item, exc)
        if found is None:
            message = f"the code under test's process said {item.name} reached a loop it was never told of"
            return Failure(None, exception, message, None), message
        loop, message = found
        return Failure(Kind.TIMEOUT, loop.exception, message, loop.where), message
    if isinstance(exc, NotImportable):
        return Failure(Kind.BROKEN, exception, exc.msg, exc.where), None
    frame = _last_frame_in(exc, code)
    at = where(frame, config) if frame else None
    if timed_out(exc):
        running = f"; it was running {shown(frame, config)}" if frame else ""
        message = (
            f"TIMEOUT: {item.name} did not finish in {item.stash.get(TIMEOUT_S, 0.0)} s{running}.\n"
            "  Look there for a loop that never ends (a condition that never changes, "
            "an index that never moves)."
        )
        return Failure(Kind.TIMEOUT, exception, message, at), message
    if _asked_for_cuda(exc):
        caller = f"{shown(frame, config)} " if frame else ""
        message = (
            f"{caller}asked for a CUDA device, but this machine has none ({exception}: {exc}).\n"
            "  Write device-agnostic code: make new tensors on the input's device "
            "(device=x.device, x.new_zeros(...), torch.zeros_like(x), .to(x.device)) "
            'instead of .cuda() or device="cuda".'
        )
        return Failure(Kind.CUDA, exception, message, at), message
    if isinstance(exc, AttributeError) and _is_module_in(getattr(exc, "obj", None), code):
        message = (
            f"{target(config).rel(exc.obj.__file__)} has no {exc.name!r}, which the tests use.\n"
            "  Keep every name and signature the stub came with (a renamed or deleted function "
            "cannot be tested)."
        )
        return Failure(None, exception, message, at), message
    kind = Kind.MEMORY if _out_of_memory(exc) else Kind.FILE_SIZE if _file_too_large(exc) else None
    # hypothesis's note names the example that failed: the input, which the learner needs
    examples = [
        example
        for note in getattr(exc, "__notes__", ())
        if note.startswith(("Falsifying", "Failing"))
        if (example := _example(note))
    ]
    handled = handled_error(exc)
    if frame is None and handled is not None:  # the kit's message for an error of the learner's line: that line
        inner = _last_frame_in(handled, code)
        at = where(inner, config) if inner else None
    if isinstance(exc, AssertionError) and frame is None and not str(exc).startswith("assert "):
        told = _without_introspection(str(exc))
        message = "\n".join([told, *(e for e in examples if _adds_to(told, e))])
        return Failure(kind, exception, message, at), message
    if isinstance(exc, pytest.fail.Exception) and not exc.pytrace:  # the kit's own words, alone
        message = "\n".join([exc.msg, *(e for e in examples if _adds_to(exc.msg, e))])
        return Failure(kind, exception, message, at), message
    worker = worker_traceback(exc, code)
    if worker is not None:  # the learner's line in the worker, and the worker's own error
        path, line, _, _ = worker.frames[-1]
        at = f"{target(config).rel(path)}:{line}"
        return Failure(kind, exception, worker.error, at), "\n".join(
            [_learners_frames(exc, code, config, worker), *examples]
        )
    error = error_line(exc)
    told = _learners_frames(exc, code, config) if frame is not None else error
    pitfall = pitfalls.named(exc)  # a cause the error alone names for certain
    return Failure(kind, exception, error, at), "\n".join([told, *([pitfall] if pitfall else []), *examples])


def handled_error(exc: BaseException) -> BaseException | None:
    """The error a test's own message was raised for (``raise AssertionError(...) from exc``, or
    while handling it), or None: a test's message has no frame of the learner's, that error may."""
    if not isinstance(exc, (AssertionError, pytest.fail.Exception)):
        return None
    return exc.__cause__ or exc.__context__


EXAMPLE = "The example that failed: "  # what opens hypothesis's example in a message
_EXAMPLE_SHOWN = 240  # characters: a few small tensors on a line or two; a larger one is a wall of numbers


def _example(note: str) -> str:
    """hypothesis's note on the failing example as one line of the input it drew, without the
    test's call around it or the `lesson` fixture: "The example that failed: (tensor([1., 2.]), 0)".
    An example too large to read is left out."""
    lines = note.splitlines()[1:]  # "Failing test case: test_softmax(" opens the call
    # (hypothesis's comments, "# or any other generated value", are about its search, not the input)
    lines = [line.split("  # ", 1)[0] for line in lines if not line.strip().startswith("#")]
    arguments = [line.strip() for line in lines if line.strip() not in ("", ")")]
    arguments = [a.removesuffix(",") for a in _joined(arguments) if not a.startswith("lesson=<module ")]
    if len(arguments) == 1:  # the test's one parameter (`case=`): its name is the test's, not the lesson's
        arguments = [arguments[0].split("=", 1)[-1]]
    shown = re.sub(r"\s+", " ", ", ".join(arguments)).replace("[ ", "[").replace("( ", "(")
    if not shown or len(shown) > _EXAMPLE_SHOWN:
        return ""
    return f"{EXAMPLE}{shown}"


def _adds_to(message: str, example: str) -> bool:
    """Whether `example` says something the kit's `message` does not: a number it does not
    name ("(10, 3)" after "... micro_batches=3) for N=10" says nothing new)."""
    return not set(NUMBER.findall(example.removeprefix(EXAMPLE))) <= set(NUMBER.findall(message))


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")  # a number in a message: dim=-1, 0.5, 1e-05


def _joined(lines: list[str]) -> list[str]:
    """hypothesis's argument lines, each argument whole (a tensor's repr spans lines)."""
    arguments: list[str] = []
    for line in lines:
        if arguments and not re.match(r"\w+=", line):
            arguments[-1] += " " + line
        else:
            arguments.append(line)
    return arguments


def _without_introspection(message: str) -> str:
    """A test's assert message without the explanation pytest's assert rewriting adds after it
    ("assert 3 == 4", "+  where 3 = <object at 0x...>.get()"): the kit's words are the message."""
    return message.split("\nassert ", 1)[0]


def _learners_frames(exc: BaseException, code: tuple[Path, ...], config: pytest.Config, worker=None) -> str:
    """An error raised in the learner's code: the learner's own frames and the error; the frames
    of the tests, the kit, torch and the other libraries left out (the test is named above it)."""
    lines, shown = [], None
    for tb in frames(exc):
        filename = tb.tb_frame.f_code.co_filename
        if is_learners(filename, code) and not repeats(shown, filename, tb.tb_lineno, tb.tb_frame.f_code.co_name):
            lines += [
                f"{where(tb, config)}: in {tb.tb_frame.f_code.co_name}",
                f"    {linecache.getline(filename, tb.tb_lineno).strip()}",
            ]
            shown = (filename, tb.tb_lineno)
    if worker is not None:
        lines += ["in a DataLoader worker process:"]
        for path, line, name, source in worker.frames:
            lines += [f"{target(config).rel(path)}:{line}: in {name}", f"    {source}"]
        lines.append(worker.error)
    else:
        lines.append(error_line(exc))
    return "\n".join(lines)


def _last_frame_in(exc: BaseException, code: tuple[Path, ...]):
    """The innermost traceback entry in the code under test, or None."""
    return next((tb for tb in reversed(frames(exc)) if is_learners(tb.tb_frame.f_code.co_filename, code)), None)


def _asked_for_cuda(exc: BaseException) -> bool:
    """torch's CUDA initialisation refused (the innermost frame is torch.cuda's lazy init) on a
    machine without a usable CUDA device."""
    cuda = sys.modules.get("torch.cuda")
    tb = innermost(exc)
    return (
        cuda is not None
        and tb is not None
        and tb.tb_frame.f_code is cuda._lazy_init.__code__
        and not cuda.is_available()
    )


def _out_of_memory(exc: BaseException) -> bool:
    torch = sys.modules.get("torch")
    oom = getattr(torch, "OutOfMemoryError", None) if torch else None
    return isinstance(exc, MemoryError) or (oom is not None and isinstance(exc, oom))


def _file_too_large(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.EFBIG


def _is_module_in(obj, code: tuple[Path, ...]) -> bool:
    """True for a module loaded from a file of the code under test."""
    path = getattr(obj, "__file__", None) if isinstance(obj, type(sys)) else None
    return bool(path) and is_learners(path, code)
