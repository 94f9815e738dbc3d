"""Grading a lesson from inside a notebook: what the grade cells of ``kata nbgrader build`` call.

    from grader.notebooks.grade_cell import grade
    grade("07_stable", "hidden", points=14.0)

The learner's code never runs the tests inside the kernel. `grade` takes the definitions from
the cells the kernel has executed (imports, functions, classes, constants), writes them to one
module and runs the lesson's tests against it in a pytest subprocess (``--impl-file``), as
``pytest exercises/NN`` would. So an infinite loop, ``os._exit`` or a torrent of warnings in
the learner's functions stays in that process, and the cell follows nbgrader's scoring rules:

- it prints one PASS/FAIL line per test with a short reason (the failure message, never the
  hidden test's source: nbgrader's feedback would show it);
- its value is a plain float between 0 and `points` (nbgrader gives full credit for anything it
  cannot read as a number, and fails the whole submission for a number above the points);
- it writes nothing to stderr and never raises (either one scores the cell 0, silently).

A cell's score is `points` times the passed share of its tests, weighted by their ``points``
markers; a skipped test (e.g. a speed test this CPU cannot run) counts for neither side. The
first grade cell runs every test of the lesson once; later cells of the same lesson reuse that
run while the code is unchanged.

Environment: KATA_ROOT (the kit whose tests/ grade; default: the kit this package lives in),
KATA_RUN_TIMEOUT (seconds for the whole run, default 300), KATA_TEST_TIMEOUT (seconds per test;
default: the kit's pytest-timeout setting).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from grader.results import Outcome, RunResult, TestResult
from grader.stubs import python_lines, statement_lines

SELECTIONS = ("all", "public", "hidden")
RUN_TIMEOUT = 300.0
_CACHE: dict[str, tuple[RunResult, str]] = {}  # sha256 of (lesson, module text) -> (RunResult, its module's path)


class GradeError(Exception):
    """Something outside the learner's code stops the grading; the message says what to do."""


# --- the learner's code: from executed cells to one module --------------------------------------


@dataclass
class Module:
    """The learner's definitions as one module, and where each of its lines came from."""

    text: str
    origin: dict[int, tuple[str, int]] = field(default_factory=dict)  # module line -> (cell's name, line)
    notes: list[str] = field(default_factory=list)  # cells that were left out, and why

    def where(self, line: int) -> str:
        cell, cell_line = self.origin.get(line, (None, None))
        return f"{cell}, line {cell_line}" if cell else f"line {line} of the graded code"


def _keeps(node: ast.stmt) -> bool:
    """Whether a top-level statement of a cell belongs to the graded module.

    Imports, functions, classes and constants do. Everything else (calls, prints, loops,
    experiments, the grade cells themselves) is left out: it ran in the notebook already, and
    it must not run again each time the tests import the module.
    """
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        constant_names = all(isinstance(t, ast.Name) and t.id.isupper() for t in targets)
        computes = any(isinstance(n, (ast.Call, ast.Await)) for n in ast.walk(node.value))
        return constant_names or not computes  # `EPS = torch.finfo(...).eps`, `Loss = Callable[...]`
    return False


def build_module(cells: list[tuple[int, str]]) -> Module:
    """One module from executed cells, given as (execution count, Python source) in order: the
    definitions of each (`_keeps`)."""
    return module_of([(f"cell [{count}]", source, False) for count, source in cells])


def module_of(cells: list[tuple[str, str, bool]]) -> Module:
    """One module from cells given as (the cell's name, Python source, whole) in order: a whole
    cell as written, any other its definitions only (`_keeps`).

    Later definitions win, as they do in a kernel; ``from __future__`` imports go first.
    """
    module = Module(text="")
    future: list[str] = []
    parsed: list[tuple[str, list[str], list[ast.stmt]]] = []
    for name, source, whole in cells:
        tree, source = _parsed(name, source, module.notes)
        if tree is None:
            continue
        kept = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                future.append(ast.unparse(node))  # must come first in a module
            elif whole or _keeps(node):
                kept.append(node)
        if kept:
            parsed.append((name, python_lines(source), kept))
    text = list(dict.fromkeys(future))
    for name, cell_lines, kept in parsed:
        text.append(f"# --- {name} ---")
        for node in kept:
            for number, line in statement_lines(node, cell_lines):
                text.append(line)
                module.origin[len(text)] = (name, number)
    module.text = "\n".join(text) + "\n"
    return module


MAGIC = re.compile(r"^[ \t]*[%!]", re.M)  # an IPython command: %timeit, %%time, !pip


def _parsed(name: str, source: str, notes: list[str]) -> tuple[ast.Module | None, str]:
    """(the cell's tree, the source it is of), or (None, ...) with a note saying why it is left
    out. A cell that parses only without its IPython commands (%magic, !shell) is taken without
    them, each line left blank, so its other lines keep their numbers."""
    try:
        return ast.parse(source), source
    except SyntaxError as exc:
        if MAGIC.search(source):
            plain = "\n".join("" if MAGIC.match(line) else line for line in python_lines(source))
            try:
                tree = ast.parse(plain)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass
            else:
                notes.append(f"{name}: its IPython commands (% and ! lines) are left out")
                return tree, plain
        notes.append(f"{name} is left out: SyntaxError at its line {exc.lineno}: {exc.msg}")
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:  # a NUL, a lone surrogate, a 1+1+... too deep
        notes.append(f"{name} is left out: Python cannot read it ({type(exc).__name__})")
    return None, source


def executed_cells() -> list[tuple[int, str]]:
    """(execution count, source) of every cell this kernel has run, in order (IPython's In)."""
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = lambda: None  # noqa: E731 (IPython's name, in one line)
    shell = get_ipython()
    if shell is None:
        raise GradeError("grade() reads the cells a notebook kernel has run; call it from a notebook cell")
    history = shell.user_ns.get("In") or []
    return [(count, source) for count, source in enumerate(history) if count and source.strip()]


# --- running the tests ------------------------------------------------------------------------


def kit_root(lesson: str) -> Path:
    """The kit whose tests grade: $KATA_ROOT, else the kit this package belongs to."""
    root = Path(os.environ.get("KATA_ROOT") or Path(__file__).resolve().parents[2])
    if not (root / "tests" / lesson).is_dir():
        where = "KATA_ROOT" if os.environ.get("KATA_ROOT") else "the kit the grader package was installed from"
        raise GradeError(
            f"no tests for lesson {lesson} in {root / 'tests'} ({where}). Grade with the instructor's "
            "kit: set KATA_ROOT to its folder (the course's nbgrader_config.py does)."
        )
    return root


def run_tests(lesson: str, module: Module):
    """The lesson's tests against `module` in a pytest subprocess (one run per lesson and code):
    (its RunResult, the path the module was written to, which the run's messages name)."""
    from grader.runs import run_pytest  # imported here: `import grader.notebooks.grade_cell` stays light

    key = hashlib.sha256(f"{lesson}\0{module.text}".encode()).hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    root = kit_root(lesson)
    with tempfile.TemporaryDirectory(prefix="kata-notebook-") as tmp:
        path = Path(tmp) / f"{lesson}.py"
        path.write_text(module.text, encoding="utf-8")
        args = [f"tests/{lesson}", "-m", "not cuda", f"--impl-file={path}", "--color=no"]
        if os.environ.get("KATA_TEST_TIMEOUT"):
            args.append(f"--timeout={os.environ['KATA_TEST_TIMEOUT']}")
        run = run_pytest(root, args, timeout=float(os.environ.get("KATA_RUN_TIMEOUT") or RUN_TIMEOUT))
    _CACHE[key] = run, str(path)
    return _CACHE[key]


# --- from outcomes to a score and PASS/FAIL lines --------------------------------------------------

_LABELS = {
    Outcome.PASSED: "PASS",
    Outcome.SKIPPED: "SKIP",
    Outcome.TODO: "TODO",
    Outcome.TIMEOUT: "TIME",
    Outcome.BROKEN: "FAIL",
}
_KITS_OWN = (Outcome.TODO, Outcome.BROKEN, Outcome.TIMEOUT, Outcome.SKIPPED)  # messages, not tracebacks


def reason(test: TestResult) -> str:
    """A short why for a test that did not pass: the failure's message, never the test's code.

    pytest's report of a failure quotes the test's source lines; only the exception's own lines
    (recorded as the failure's summary) are kept. The kit's own messages (TODO, timeout, an
    import that failed) are short already: their first lines say it all.
    """
    text = test.failure.summary if test.failure else test.message
    if test.outcome in _KITS_OWN:
        text = text.strip().removeprefix("TODO: ").removeprefix("TIMEOUT: ")
        lines = [line for line in text.splitlines() if line.strip()][:3]
    else:
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        if len(lines) > 6:
            lines = [*lines[:6], "..."]
    return "\n".join(line if len(line) <= 240 else line[:237] + "..." for line in lines)


def _in_cells(text: str, module: Module, path: str) -> str:
    """Paths of the written module in `text` shown as the notebook cells they came from."""
    if not path:
        return text
    text = re.sub(rf'File "{re.escape(path)}", line (\d+)', lambda m: module.where(int(m.group(1))), text)
    text = re.sub(rf"{re.escape(path)}:(\d+)", lambda m: module.where(int(m.group(1))), text)
    return text.replace(path, "your code")


def score(
    run: RunResult, selection: str, points: float, module: Module, lesson: str, path: str = ""
) -> tuple[float, list[str]]:
    """(score, report lines) for the tests of `selection` (all, public or hidden) in `run`, whose
    messages name the graded module by `path`."""
    wanted = [t for t in run.collected or [] if selection == "all" or t.public == (selection == "public")]
    kind = {"all": "tests", "public": "public tests", "hidden": "hidden tests"}[selection]
    lines = [*module.notes]
    if not wanted:
        problem = run.collect_errors[0].message if run.collect_errors else run.output.strip()[-600:]
        lines.append(f"FAIL  the {kind} of {lesson} did not run:\n" + indented(_in_cells(problem, module, path)))
        return 0.0, lines
    outcomes = run.by_id()
    # Tests run in collection order: the first one without an outcome was running when it stopped.
    cut_short = next((t.nodeid for t in run.collected if t.nodeid not in outcomes), None)
    earned = possible = 0.0
    passed = 0
    rows = []
    for test in wanted:
        entry = outcomes.get(test.nodeid)
        name = test.nodeid.split("::", 1)[-1]
        if entry is None:
            possible += test.max_points
            if test.nodeid != cut_short:
                rows.append(f"FAIL  {name}: not run (the test process had stopped)")
            elif run.stopped:
                rows.append(
                    f"TIME  {name}: still running when the time for the whole lesson "
                    f"({run.seconds:.0f} s) was spent; the tests after it did not run"
                )
            else:
                rows.append(
                    f"FAIL  {name}: the test process ended during this test (exit code "
                    f"{run.returncode}): does your code call os._exit or sys.exit?"
                )
            continue
        outcome = entry.outcome
        if entry.counts:
            possible += test.max_points
        if outcome is Outcome.PASSED:
            earned += test.max_points
            passed += 1
            rows.append(f"PASS  {name}")
        else:
            why = _in_cells(reason(entry), module, path)
            rows.append(
                f"{_LABELS.get(outcome, 'FAIL')}  {name}" + (f": {why}" if "\n" not in why else "\n" + indented(why))
            )
    value = cell_value(points, earned, possible)
    header = f"{lesson}, {kind}: {passed} of {len(wanted)} passed, {value:g} of {points:g} points"
    return float(value), [header, *lines, *rows]


def cell_value(points: float, earned: float, possible: float) -> float:
    """A grade cell's value: its `points` times the share of the `possible` points `earned`, to
    two decimals and never above `points` (nbgrader fails a submission whose cell scores more)."""
    return min(points, round(points * earned / possible, 2)) if possible else 0.0


def indented(text: str) -> str:
    return "\n".join("      " + line for line in text.splitlines())


# --- the grade cell's call ----------------------------------------------------------------------


def grade(lesson: str, tests: str = "all", *, points: float, cells: list[tuple[int, str]] | None = None) -> float:
    """Grade `lesson` on the code this notebook has run; print why; return the score.

    tests: "all", "public" (the tests a learner sees) or "hidden" (the others).
    points: the grade cell's points; the result is a float in [0, points].
    cells: (execution count, source) pairs to grade instead of the kernel's history.
    Never raises and never writes to stderr (nbgrader would score the cell 0 without a word).
    """
    if tests not in SELECTIONS:
        print(f"FAIL  grade(): tests must be one of {', '.join(SELECTIONS)}, not {tests!r}")
        return 0.0
    try:
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = build_module(executed_cells() if cells is None else cells)
            run, path = run_tests(lesson, module)
            value, lines = score(run, tests, float(points), module, lesson, path)
    except KeyboardInterrupt:
        print(f"FAIL  grading {lesson} was interrupted (the cell's time limit?): 0 points")
        return 0.0
    except GradeError as exc:
        print(f"FAIL  {exc}")
        return 0.0
    except Exception as exc:  # noqa: BLE001 (a bug of the grader's: say so, and let the instructor re-grade)
        print(f"FAIL  the grader itself failed ({type(exc).__name__}: {exc}); tell your instructor")
        return 0.0
    print("\n".join(lines))
    return value
