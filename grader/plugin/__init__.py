"""The pytest plugin that runs a lesson's tests against the learner's code.

Loaded by the root conftest.py. What it adds to plain pytest:

- ``pytest exercises/07_stable`` (or ``solutions/07_stable``) collects ``tests/07_stable``
  and runs it against the named tree; ``--impl`` picks the tree when the tests are named
  directly, ``--mutant PATH`` runs them against the reference with a known-wrong
  version swapped in, and ``--impl-file PATH`` against the code in one file (a notebook's).
- The ``lesson`` fixture: the module under test (``test_<stem>.py`` checks ``<stem>.py``).
- Short, actionable reports: an untouched stub is a TODO with file:line (no traceback, even
  when it ran in a DataLoader worker; a test that can only end in one is not even run, see
  grader.plugin.untouched), a module that cannot be imported is one BROKEN line, a
  timeout names the line that looped, and code that asks for CUDA on a machine without it is
  told how to be device-agnostic.
- ``--kata-report PATH``: every test's outcome as JSON, which ``grader verify`` reads.
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path

import pytest

from grader.plugin import measurements as records, untouched
from grader.files import write_json
from grader.lessons import IMPLS, LESSON_RE, Lesson, mutant_target

_TIMEOUT_MARK = "from pytest-timeout"


# --- options ------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata", "Effective PyTorch Kata")
    group.addoption(
        "--impl",
        choices=IMPLS,
        default="exercises",
        help="which tree the tests under tests/ run against (default: exercises). "
        "Naming exercises/NN_topic or solutions/NN_topic on the command line picks it too.",
    )
    group.addoption(
        "--mutant",
        metavar="PATH",
        help="run against the reference with this known-wrong version (tests/NN/mutants/*.py) "
        "swapped in; used by `python -m grader verify`.",
    )
    group.addoption(
        "--impl-file",
        metavar="PATH",
        help="run the tests against the code in this one file instead of a tree (every module of the "
        "lesson is that file): a learner's notebook code written out by a grader, say.",
    )
    group.addoption("--kata-report", metavar="PATH", help="write every test's outcome to PATH as JSON.")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("kata_report")
    if path:
        config.pluginmanager.register(JsonReport(Path(path)), "kata-json-report")
    gc.freeze()  # see pytest_runtestloop


# --- collection: exercises/NN and solutions/NN stand for tests/NN ---------------------------


class LessonDir(pytest.Directory):
    """``exercises/NN_topic`` or ``solutions/NN_topic``: collects ``tests/NN_topic`` against it."""

    @property
    def kata_impl(self) -> str:
        return self.path.parent.name

    def collect(self):
        tests = self.config.rootpath / "tests" / self.path.name
        if not tests.is_dir():
            raise self.CollectError(
                f"lesson {self.path.name} has no tests: expected the folder {tests}"
            )
        # `pytest exercises/07_stable/stable.py` (an editor's "test this file"): the file's tests.
        for source in sorted(self.path.glob("*.py")):
            if self.session.isinitpath(source):
                yield LessonFile.from_parent(self, path=source)
        yield pytest.Dir.from_parent(self, path=tests)


class LessonFile(pytest.File):
    """``exercises/NN_topic/<stem>.py`` named on the command line: collects ``tests/NN_topic/test_<stem>.py``."""

    def collect(self):
        test_file = self.config.rootpath / "tests" / self.path.parent.name / f"test_{self.path.name}"
        if not test_file.is_file():
            raise self.CollectError(f"no tests check {self.path.name}: expected {test_file}")
        # Collected through its folder, so that the folder's conftest.py files load.
        yield OneFileDir.from_parent(self, path=test_file.parent, only=test_file)


class OneFileDir(pytest.Dir):
    """A tests/NN_topic folder of which only one test file is collected."""

    def __init__(self, *, only: Path, **kwargs) -> None:
        super().__init__(**kwargs)
        self.only = only

    @classmethod
    def from_parent(cls, parent, *, path: Path, only: Path):
        return cls._create(parent=parent, path=path, only=only)

    def collect(self):
        return [node for node in super().collect() if node.path == self.only]


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector):
    root = parent.config.rootpath
    if path.parent.parent == root and path.parent.name in IMPLS and LESSON_RE.match(path.name):
        return LessonDir.from_parent(parent, path=path)
    return None


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> None:
    """Load the kit's hypothesis profile before a test module that uses hypothesis is imported
    (``@given`` fixes its settings when the test is defined; the default 200 ms deadline
    would fail correct code on a busy machine). Modules without hypothesis do not pay for it."""
    if "grader.plugin.hypothesis_profile" not in sys.modules and "hypothesis" in module_path.read_text(encoding="utf-8", errors="replace"):
        importlib.import_module("grader.plugin.hypothesis_profile")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cuda_items = [item for item in items if item.get_closest_marker("cuda")]
    if cuda_items:
        import torch

        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="needs a CUDA device; none is present here")
            for item in cuda_items:
                item.add_marker(skip)


# --- the process: one torch thread, a frozen heap ------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    """The tests run with one torch thread, as ``kata grade`` runs them, on a frozen heap.

    Their tensors are small; on them torch's thread pool only costs time: some CPU kernels
    (softmax) start it for any size, and with the other cores busy (a class graded in parallel,
    CI) each such call waits milliseconds for a thread to be scheduled (5-8 ms for a 3x4
    softmax on 2 busy cores, 2 us on one thread). The learner's count is back after the run.

    Every object that exists once the tests are collected (torch, hypothesis, pytest: ~200k)
    is moved out of the garbage collector's sight (gc.freeze, here and at configure time, as
    ``kata grade``'s preloaded parent does): each full collection walked all of them, 50-120 ms,
    and a lesson's run made 5-6 of them (hypothesis and pytest call gc.collect too). Objects
    the tests make are collected as ever. The freeze is not undone: the process is about to
    end, and unfreezing would make pytest's last gc.collect walk everything again.
    """
    gc.freeze()
    torch = sys.modules.get("torch")  # the lessons' test modules have imported it by now
    if torch is None:
        return (yield)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return (yield)
    finally:
        torch.set_num_threads(threads)


# --- the module under test ------------------------------------------------------------------


class NotImportable(pytest.fail.Exception):
    """The module under test could not be imported; one short message, no traceback."""


def _impl_of(node: pytest.Node) -> str:
    for parent in node.listchain():
        if isinstance(parent, LessonDir):
            return parent.kata_impl
    return node.config.getoption("impl")


@pytest.fixture(scope="module")
def lesson(request: pytest.FixtureRequest):
    """The module this test file checks: tests/NN/test_<stem>.py checks <impl>/NN/<stem>.py."""
    test_file = Path(request.node.path)
    name, stem = test_file.parent.name, test_file.stem.removeprefix("test_")
    config = request.config
    mutant = config.getoption("mutant")
    mutant = config.rootpath / mutant if mutant else None  # an absolute path stays as it is
    impl_file = _impl_file(config)
    impl = "solutions" if mutant else _impl_of(request.node)
    source = impl_file if impl_file and not mutant else config.rootpath / impl / name / f"{stem}.py"
    if not source.is_file():
        raise NotImportable(f"{_rel(source, config)} not found: the tests in {test_file.name} check it.", pytrace=False)
    try:
        if mutant:
            return _load_with_mutant(Lesson(config.rootpath, name), stem, source, mutant)
        if impl_file:  # every module of the lesson is this one file
            return _load_file(f"_kata_impl.{name}.{stem}", impl_file)
        return importlib.import_module(f"{impl}.{name}.{stem}")
    except Exception as exc:  # SyntaxError, ImportError, anything raised at import time
        message = _describe_import_error(exc, mutant or source, config)
    # Raised outside the except block, so no chained traceback is printed.
    raise NotImportable(message, pytrace=False)


def _impl_file(config: pytest.Config) -> Path | None:
    """--impl-file as an absolute path (a relative one is taken from where pytest was started)."""
    path = config.getoption("impl_file")
    return (config.invocation_params.dir / path).resolve() if path else None


def _load_file(name: str, path: Path):
    """A module executed from `path` under `name` (registered, so pickling by reference works)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_with_mutant(lesson: Lesson, stem: str, source: Path, mutant: Path):
    """A private copy of the reference module with the mutant's definitions executed into it."""
    if mutant_target(mutant, lesson) != stem:
        pytest.skip(f"mutant {mutant.name} targets another module of {lesson.name}")
    module = _load_file(f"_kata_mutant.{lesson.name}.{stem}", source)
    code = compile(mutant.read_text(encoding="utf-8"), str(mutant), "exec")
    exec(code, module.__dict__)
    return module


def _describe_import_error(exc: BaseException, source: Path, config: pytest.Config) -> str:
    rel = _rel(source, config)
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{_rel(Path(exc.filename), config)}:{exc.lineno}"
        line = (exc.text or "").rstrip()
        what = f"{type(exc).__name__}: {exc.msg}"
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == source]
        frame = frames[-1] if frames else None
        where = f"{rel}:{frame.lineno}" if frame else rel
        line = (frame.line or "") if frame else ""
        what = f"{type(exc).__name__}: {exc}"
    text = f"{where}: {what} (the tests could not import {rel})"
    if line:
        text += f"\n    {line.strip()}"
    return text + "\n  Fix that line, save, and run the tests again."


def _rel(path: Path, config: pytest.Config) -> str:
    try:
        return Path(path).resolve().relative_to(config.rootpath).as_posix()
    except ValueError:
        return str(path)


# --- reports --------------------------------------------------------------------------------


def _inside(path, folder: Path) -> bool:
    """True for a file inside `folder` (the learner's tree)."""
    return Path(path).resolve().is_relative_to(folder)


def _last_frame_in(excinfo: pytest.ExceptionInfo, folder: Path):
    """The innermost traceback entry inside `folder`, or None."""
    for entry in reversed(excinfo.traceback):
        if _inside(entry.path, folder):
            return entry
    return None


def _where(entry, config: pytest.Config) -> str:
    code = entry.frame.code.raw
    name = getattr(code, "co_qualname", code.co_name)
    return f"{name} ({_rel(Path(entry.path), config)}:{entry.lineno + 1})"


class StubReached(BaseException):
    """A stub's NotImplementedError, carried out of a hypothesis test at its first example.

    A BaseException, so hypothesis lets it through at once instead of shrinking an input that
    cannot matter (seconds per test); the TODO report unwraps it (its ``__cause__``)."""


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item):
    impl_root = _impl_root(item)
    module = getattr(item, "funcargs", {}).get(untouched.FIXTURE)
    if module is not None:
        stub = untouched.first_stub(module, Path(item.path), getattr(item, "originalname", item.name), impl_root)
        if stub is not None:  # the test can only end in this stub's TODO: skip its setup work
            untouched.raise_from(stub)
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)  # a @given test
    if handle is None:
        return (yield)
    test = handle.inner_test  # hypothesis calls this (reassignable) attribute for each example

    @functools.wraps(test)
    def stop_at_a_stub(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except NotImplementedError as exc:
            if _stub_site(exc, impl_root, item.config) is None:
                raise
            raise StubReached() from exc

    handle.inner_test = stop_at_a_stub
    try:
        return (yield)
    finally:
        handle.inner_test = test


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_of_a_stub(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
    """An untouched stub's report: one TODO line, made before pytest renders a traceback that
    nobody reads (tens of ms a test, most of an untouched lesson's run)."""
    exc = call.excinfo.value if call.excinfo is not None else None
    if isinstance(exc, StubReached):
        exc = exc.__cause__
    if not isinstance(exc, NotImplementedError):
        return None
    site = _stub_site(exc, _impl_root(item), item.config)
    if site is None:
        return None  # torch's own (an nn.Module without forward): a real failure
    where, message = site
    sections = [(f"Captured {key} {when}", text) for when, key, text in getattr(item, "_report_sections", [])]
    report = pytest.TestReport(
        item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", message, call.when,
        sections, call.duration, call.start, call.stop, user_properties=item.user_properties,
    )
    report.kata_outcome, report.kata_where = "todo", where
    return report


def _stub_site(exc: NotImplementedError, impl_root: Path, config: pytest.Config) -> tuple[str, str] | None:
    """("exercises/NN/file.py:LINE", TODO message) when the learner's stub raised `exc`
    (the innermost frame is in their tree, or in a DataLoader worker's traceback), else None."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None and _inside(tb.tb_frame.f_code.co_filename, impl_root):
        code = tb.tb_frame.f_code
        where = f"{_rel(Path(code.co_filename), config)}:{tb.tb_lineno}"
        return where, f"TODO: {getattr(code, 'co_qualname', code.co_name)} ({where}) is not implemented yet"
    frame = _worker_frame(str(exc), impl_root)
    if frame is not None:
        path, line, name = frame
        where = f"{_rel(Path(path), config)}:{line}"
        return where, f"TODO: {name} ({where}) is not implemented yet (it ran in a DataLoader worker process)"
    return None


def _impl_root(item: pytest.Item) -> Path:
    """Where the learner's code under test is: the --impl-file, or the tree's root folder."""
    return _impl_file(item.config) or item.config.rootpath / _impl_of(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    report.kata_points = _points(item)
    report.kata_public = item.get_closest_marker("public") is not None
    if call.when == "call":
        report.kata_speed = records.drain()  # the speed ratios this test measured
    excinfo = call.excinfo
    if excinfo is None or not report.failed or getattr(report, "kata_outcome", None) == "todo":
        return report
    config = item.config
    impl_root = _impl_root(item)
    if excinfo.errisinstance(NotImportable):
        report.kata_outcome = "broken"
    elif _asked_for_cuda(excinfo):
        entry = _last_frame_in(excinfo, impl_root)
        where = f"{_where(entry, config)} " if entry else ""
        report.longrepr = (
            f"{where}asked for a CUDA device, but this machine has none "
            f"({type(excinfo.value).__name__}: {excinfo.value}).\n"
            "  Write device-agnostic code: make new tensors on the input's device "
            "(device=x.device, x.new_zeros(...), torch.zeros_like(x), .to(x.device)) "
            "instead of .cuda() or device=\"cuda\"."
        )
    elif excinfo.errisinstance(AttributeError) and _is_module_in(getattr(excinfo.value, "obj", None), impl_root):
        missing, module = excinfo.value.name, excinfo.value.obj
        report.longrepr = (
            f"{_rel(Path(module.__file__), config)} has no {missing!r}, which the tests use.\n"
            "  Keep every name and signature the stub came with (a renamed or deleted function "
            "cannot be tested)."
        )
    elif excinfo.errisinstance(pytest.fail.Exception) and _TIMEOUT_MARK in str(excinfo.value):
        seconds = str(excinfo.value).split(">")[1].split("s")[0]
        entry = _last_frame_in(excinfo, impl_root)
        running = f"; it was running {_where(entry, config)}" if entry else ""
        report.kata_outcome = "timeout"
        report.longrepr = (
            f"TIMEOUT: {item.name} did not finish in {seconds} s{running}.\n"
            "  Look there for a loop that never ends (a condition that never changes, "
            "an index that never moves)."
        )
    return report


# torch re-raises a worker's exception in the main process with the worker's traceback as text.
_WORKER_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)')

# What torch says when code asks for CUDA on a machine without it (CPU build, or no driver/GPU).
_NO_CUDA = ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver", "No CUDA GPUs are available")


def _worker_frame(text: str, folder: Path) -> tuple[str, str, str] | None:
    """(path, line, function) of the last frame of the worker traceback in an exception's
    message (`text`), if it lies in `folder`."""
    if "in DataLoader worker process" not in text:
        return None
    frames = _WORKER_FRAME.findall(text)
    if not frames or not _inside(frames[-1][0], folder):
        return None
    return frames[-1]


def _asked_for_cuda(excinfo: pytest.ExceptionInfo) -> bool:
    return excinfo.errisinstance((AssertionError, RuntimeError)) and any(
        phrase in str(excinfo.value) for phrase in _NO_CUDA
    )


def _is_module_in(obj, folder: Path) -> bool:
    """True for a module loaded from a file inside `folder` (the learner's tree)."""
    path = getattr(obj, "__file__", None) if isinstance(obj, type(sys)) else None
    return bool(path) and _inside(path, folder)


def _points(item: pytest.Item) -> float:
    marker = item.get_closest_marker("points")
    return float(marker.args[0]) if marker and marker.args else 1.0


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    outcome = getattr(report, "kata_outcome", None)
    if outcome == "todo":
        return "todo", "T", ("TODO", {"yellow": True})
    if outcome == "broken":
        return "broken", "B", ("BROKEN", {"red": True})
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tr = terminalreporter
    broken = _unique_messages(tr.stats.get("broken", []))
    todos = _unique_messages(tr.stats.get("todo", []))
    if broken:
        tr.section("could not import", sep="=", red=True, bold=True)
        for message, count in broken.items():
            tr.line(f"{message}\n  ({count} test{'s' if count != 1 else ''} could not run)")
    if todos:
        tr.section("TODO", sep="=", yellow=True, bold=True)
        for message, count in todos.items():
            tr.line(f"{message}  ({count} test{'s wait' if count != 1 else ' waits'} on it)")
        first = tr.stats["todo"][0].kata_where  # "exercises/07_stable/stable.py:52"
        lesson = Path(first).parts[1]
        tr.line(
            f"\nNext: open {first}, read the TODO there and replace `raise NotImplementedError` "
            "with your code; save and run the same command again.\n"
            f"Stuck? `kata hint {lesson}` gives a hint, one level at a time.",
            yellow=True,
        )


def _unique_messages(reports) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        message = str(report.longrepr)
        counts[message] = counts.get(message, 0) + 1
    return counts


class JsonReport:
    """Writes each test's final outcome to a JSON file: the channel ``grader verify`` reads.

    ``{"exitstatus": int, "collect_errors": [{"nodeid", "message"}],
    "collected": [{"nodeid", "points", "public"}],
    "tests": [{"nodeid", "outcome", "message", "points", "public", "speed", "seconds"}]}``, with outcome
    one of passed, failed, error, skipped, todo, broken, timeout; a todo also has "where",
    the stub's file:line. The file is rewritten after collection and after each test, with
    "exitstatus" null until the session ends: a process killed midway (a timeout, or code
    that calls os._exit) still leaves what it ran, and "collected" says what it did not.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.tests: dict[str, dict] = {}
        self.collect_errors: list[dict] = []
        self.collected: list[dict] = []
        self.finished: set[str] = set()  # tests whose teardown ran: their outcome is final

    def _write(self, exitstatus: int | None) -> None:
        data = {
            "exitstatus": exitstatus,
            "collect_errors": self.collect_errors,
            "collected": self.collected,
            # Not a test cut short by an interrupt: its setup passed, but that says nothing.
            "tests": [entry for nodeid, entry in self.tests.items() if nodeid in self.finished],
        }
        write_json(self.path, data)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors.append({"nodeid": report.nodeid, "message": str(report.longrepr)})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [
            {"nodeid": item.nodeid, "points": _points(item), "public": item.get_closest_marker("public") is not None}
            for item in session.items
        ]
        self._collected()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report)
        if report.when == "teardown":  # the test is over: its outcome is final
            self.finished.add(report.nodeid)
            self._finished(report.nodeid)

    def _record(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(
            report.nodeid,
            {"nodeid": report.nodeid, "outcome": "passed", "message": "", "speed": [], "seconds": 0.0},
        )
        entry["seconds"] = round(entry["seconds"] + report.duration, 4)  # setup, call and teardown
        entry["points"] = getattr(report, "kata_points", 1.0)
        entry["public"] = getattr(report, "kata_public", False)
        entry["speed"] += getattr(report, "kata_speed", [])
        if entry["outcome"] != "passed" or report.passed:
            return  # the first phase that did not pass decides
        if report.skipped:
            entry["outcome"] = "skipped"
            entry["message"] = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            return
        outcome = getattr(report, "kata_outcome", None)
        entry["outcome"] = outcome or ("failed" if report.when == "call" else "error")
        entry["message"] = str(report.longrepr)
        if hasattr(report, "kata_where"):
            entry["where"] = report.kata_where  # a TODO's "exercises/NN/file.py:LINE"

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._ended(int(exitstatus))

    # Where the three events go: here, into the file, rewritten whole each time;
    # grader.grading.pipe.Reporter sends them down a pipe instead.
    def _collected(self) -> None:
        self._write(None)

    def _finished(self, nodeid: str) -> None:
        self._write(None)

    def _ended(self, exitstatus: int) -> None:
        self._write(exitstatus)
