"""``python -m grader verify``: prove each lesson's tests can tell right from wrong.

For every lesson: the tests pass against solutions/, no test passes against the untouched
exercises/, the two trees agree (files, public names, signatures, docstrings, a TODO and a
NotImplementedError in every stub), hints exist, and every mutant (a known-wrong version kept
in tests/NN/mutants/) makes at least one test fail.

Each pytest run is forked from this process once it has imported torch, pytest and hypothesis
(grader/sandbox.py, as ``kata grade`` runs a class): a fresh process would pay `import torch`
and torch's lazy imports (torch._dynamo for the first optimizer) again in each of ~260 runs.
Where the system cannot fork, each run is a fresh subprocess. Either way outcomes are read from
the harness's own report, never from terminal text.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from grader.lessons import KitError, Lesson, chosen_lessons, mutant_target
from grader.stubs import has_todo_raise
from grader.results import Outcome, RunResult, TestResult
from grader.runs import RUN_TIMEOUT, pytest_args, run_pytest

MIN_HINT_LEVELS = 3
MIN_PUBLIC_TESTS = 2


def _limits():
    from grader.grading.sandbox import Limits

    # As generous as a learner's own run: the kit's per-test timeout (pyproject.toml), no
    # memory limit a lesson could meet (DataLoader workers count separately), output kept.
    return Limits(wall=RUN_TIMEOUT, cpu=RUN_TIMEOUT, memory=16 << 30, output=1 << 20, test_timeout=None)


@dataclass
class Run:
    """One pytest run: a lesson's tests against solutions, exercises or a mutant."""

    lesson: Lesson
    kind: str = "solutions"  # "solutions", "exercises" or "mutant"
    mutant: Path | None = None
    result: RunResult = field(default_factory=RunResult)
    ended: str = ""  # why a forked run did not end as pytest ends, in words

    def args(self) -> list[str]:
        args = [f"tests/{self.lesson.name}"]
        if self.kind == "mutant":
            return [*args, f"--mutant={self.mutant}", "-x"]  # one failing test is enough
        return [*args, f"--impl={self.kind}"]

    def execute(self) -> Run:
        """Run in a fresh subprocess (where the system cannot fork)."""
        self.result = run_pytest(self.lesson.root, self.args())
        return self

    def job(self, home: Path):
        """This run as a job for grader.grading.sandbox, forked from the preloaded verify process."""
        from grader.grading.sandbox import Job

        return Job(name=f"{self.lesson.name} {self.label}", workdir=self.lesson.root,
                   args=pytest_args(*self.args()), home=home, tag=self)

    def take(self, run: RunResult) -> None:
        """What the forked run reported."""
        self.result = run
        notes = [run.ended] if run.ended else []
        notes += [f"tampering seen: {what}" for what in run.tampering]
        if notes:
            run.exitstatus = None  # a run that did not end as pytest ends says nothing
            self.ended = "; ".join(notes)

    @property
    def tests(self) -> list[TestResult]:
        return self.result.tests

    def count(self, *outcomes: Outcome) -> int:
        return self.result.count(*outcomes)

    @property
    def tested(self) -> bool:
        """Whether the run got as far as running tests (no collection error, some tests)."""
        return self.result.exitstatus is not None and not self.result.collect_errors and bool(self.tests)

    @property
    def label(self) -> str:
        return self.mutant.stem if self.mutant else self.kind


@dataclass
class LessonResult:
    lesson: Lesson
    problems: list[str] = field(default_factory=list)
    solutions: Run | None = None
    exercises: Run | None = None
    mutants: list[Run] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text)


# --- static checks: the two trees agree --------------------------------------------------------


def _functions(tree: ast.Module):
    """Public top-level functions and the public classes' methods, by qualified name."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            out[node.name] = node
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def _import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _signatures(module, names) -> dict[str, str]:
    out = {}
    for name in names:
        obj = module
        for part in name.split("."):
            obj = getattr(obj, part, None)
        try:
            out[name] = str(inspect.signature(obj))
        except (TypeError, ValueError):
            out[name] = "?"
    return out


def check_trees(result: LessonResult) -> None:
    lesson = result.lesson
    for tree in ("exercises", "solutions", "tests"):
        if not lesson.dir(tree).is_dir():
            result.problem(f"{tree}/{lesson.name}/ is missing: every lesson has a folder in exercises/, solutions/ and tests/.")
    stubs, refs = set(lesson.modules("exercises")), set(lesson.modules("solutions"))
    for stem in sorted(stubs ^ refs):
        have = "exercises" if stem in stubs else "solutions"
        result.problem(f"{have}/{lesson.name}/{stem}.py has no twin in the other tree: add it, or remove this one.")
    if not refs and lesson.dir("solutions").is_dir():
        result.problem(f"solutions/{lesson.name}/ holds no module.")
    for stem in sorted(stubs & refs):
        _check_module(result, stem)
    _check_hints(result)


def _check_module(result: LessonResult, stem: str) -> None:
    lesson = result.lesson
    stub_path, ref_path = lesson.dir("exercises") / f"{stem}.py", lesson.dir("solutions") / f"{stem}.py"
    stub_source = stub_path.read_text(encoding="utf-8")
    try:
        stub_tree = ast.parse(stub_source, str(stub_path))
        ref_tree = ast.parse(ref_path.read_text(encoding="utf-8"), str(ref_path))
    except SyntaxError as exc:
        result.problem(f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}; fix it first.")
        return
    rel = f"{lesson.name}/{stem}.py"
    stub_fns, ref_fns = _functions(stub_tree), _functions(ref_tree)
    for name in sorted(stub_fns.keys() ^ ref_fns.keys()):
        where = "exercises" if name in stub_fns else "solutions"
        result.problem(f"{rel}: public name {name} is only in {where}/; stub and solution must define the same names.")
    if ast.get_docstring(stub_tree) != ast.get_docstring(ref_tree):
        result.problem(f"{rel}: the module docstrings differ; the solution is the stub plus the answer.")
    stub_lines = stub_source.splitlines()
    for name in sorted(stub_fns.keys() & ref_fns.keys()):
        stub, ref = stub_fns[name], ref_fns[name]
        if ast.get_docstring(stub) != ast.get_docstring(ref):
            result.problem(f"{rel}: the docstrings of {name} differ between exercises/ and solutions/.")
        if isinstance(stub, ast.ClassDef):
            methods = [n for n in stub.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if not any(has_todo_raise(m) for m in methods):
                result.problem(f"exercises/{rel}: class {name} has no method left for the learner "
                               "(none raises NotImplementedError).")
            continue
        if has_todo_raise(ref):
            result.problem(f"solutions/{rel}:{ref.lineno}: {name} still raises NotImplementedError.")
        is_method = "." in name
        if not has_todo_raise(stub):
            if not is_method:
                result.problem(f"exercises/{rel}:{stub.lineno}: {name} is not a stub: it must end in "
                               "`raise NotImplementedError`.")
            continue
        body = stub_lines[stub.lineno - 1:stub.end_lineno]
        if not any("# TODO:" in line for line in body):
            result.problem(f"exercises/{rel}:{stub.lineno}: {name} has no `# TODO:` comment saying what to write.")
    _check_signatures(result, stem, sorted(stub_fns.keys() & ref_fns.keys()))


def _check_signatures(result: LessonResult, stem: str, names: list[str]) -> None:
    lesson = result.lesson
    try:
        stub = _import_file(lesson.dir("exercises") / f"{stem}.py", f"_kata_verify_stub_{lesson.name}_{stem}")
        ref = _import_file(lesson.dir("solutions") / f"{stem}.py", f"_kata_verify_ref_{lesson.name}_{stem}")
    except Exception as exc:  # reported here; the pytest runs report it too, with file:line
        result.problem(f"{lesson.name}/{stem}.py: cannot import ({type(exc).__name__}: {exc}).")
        return
    stub_sigs, ref_sigs = _signatures(stub, names), _signatures(ref, names)
    for name in names:
        if stub_sigs[name] != ref_sigs[name]:
            result.problem(f"{lesson.name}/{stem}.py: {name}{stub_sigs[name]} in exercises/ but "
                           f"{name}{ref_sigs[name]} in solutions/; the signatures must match.")


def _check_hints(result: LessonResult) -> None:
    lesson = result.lesson
    hints = lesson.hints()
    rel = lesson.hints_file.relative_to(lesson.root)
    if len(hints) < MIN_HINT_LEVELS or not all(hints):
        result.problem(f"{rel}: needs at least {MIN_HINT_LEVELS} non-empty '## Level N' sections "
                       f"(found {sum(map(bool, hints))}).")
        return
    text = "\n".join(hints)
    for path in sorted(lesson.dir("solutions").glob("*.py")):
        for line in _code_lines(path):
            if line in text:
                result.problem(f"{rel}: a hint quotes the reference solution ({path.name}: `{line}`); "
                               "hints point the way, they never give the code.")


def _code_lines(path: Path) -> set[str]:
    """The solution's non-trivial statements (no docstrings, comments or short lines)."""
    source = path.read_text(encoding="utf-8")
    strings = set()  # line numbers of docstrings and other bare string statements
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            strings.update(range(node.lineno, node.end_lineno + 1))
    lines = set()
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0].strip()
        if len(code) >= 30 and number not in strings:
            lines.add(code)
    return lines


# --- dynamic checks: the pytest runs ---------------------------------------------------------


def judge_runs(result: LessonResult) -> None:
    name = result.lesson.name
    ref, stub = result.solutions, result.exercises
    seen: dict[tuple[str, str], list[str]] = {}  # one report per distinct error, with every run it broke
    for run in (ref, stub, *result.mutants):
        for error in run.result.collect_errors:
            seen.setdefault((error.nodeid or "tests", error.message), []).append(run.label)
    for (where, message), labels in seen.items():
        runs = ", ".join(labels) if len(labels) <= 3 else f"{', '.join(labels[:2])} and {len(labels) - 2} more runs"
        result.problem(f"{name} ({runs}): collection error in {where}:\n{_indent(message)}")
    for run in (ref, stub, *result.mutants):
        if run.result.exitstatus is None:
            result.problem(f"{name} ({run.label}): the pytest run {run.ended or 'wrote no report'}. Its output:\n"
                           f"{_indent(run.result.output[-3000:])}")
    if ref.result.exitstatus is not None:
        if not ref.tests:
            result.problem(f"{name}: no tests were collected from tests/{name}/ (pytest exit 5 is not a pass).")
        for test in ref.tests:
            if test.outcome not in (Outcome.PASSED, Outcome.SKIPPED):
                result.problem(f"{name}: {test.nodeid} is {test.outcome} against solutions/:\n"
                               f"{_indent(test.message)}")
        public = sum(t.public for t in ref.tests)
        if public < MIN_PUBLIC_TESTS:
            result.problem(f"{name}: {public} test(s) marked @pytest.mark.public; a student release needs at "
                           f"least {MIN_PUBLIC_TESTS} for quick feedback.")
    if stub.result.exitstatus is not None:
        for test in stub.tests:
            if test.outcome is Outcome.PASSED:
                result.problem(f"{name}: {test.nodeid} passes against the untouched stubs; a test that passes "
                               "before the learner wrote anything checks nothing. Make it call the code.")
            elif test.outcome is Outcome.BROKEN:
                result.problem(f"{name}: the stubs cannot be imported:\n{_indent(test.message)}")
                break
    if not result.mutants:
        result.problem(f"{name}: no mutants in tests/{name}/mutants/; add the naive versions from the seed "
                       "and the bugs learners make.")
    for run in result.mutants:
        if not run.tested:
            continue  # reported above; a run that tested nothing says nothing about the mutant
        broken = [t for t in run.tests if t.outcome in (Outcome.BROKEN, Outcome.TODO)]
        if broken:
            result.problem(f"{name}: mutant {run.mutant.name} does not load:\n{_indent(broken[0].message)}")
        elif not killers(run):
            result.problem(f"{name}: mutant {run.mutant.name} SURVIVED: every test passed against it. "
                           f"Add a test it fails ({_doc(run.mutant)})")


def killers(run: Run) -> list[str]:
    return [t.nodeid for t in run.tests if t.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT)]


def _doc(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "it has no docstring saying what is wrong"
    return doc.splitlines()[0]


def _indent(text: str) -> str:
    return "\n".join("      " + line for line in str(text).strip().splitlines()[:15])


# --- putting it together ------------------------------------------------------------------------


REQUIRED = ("torch", "pytest", "pytest_timeout", "hypothesis", "numpy")


def missing_dependencies() -> list[str]:
    """What the pytest runs need but this interpreter cannot import (they run with it)."""
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "For each lesson: the tests pass against solutions/, no test passes against the untouched "
        "exercises/, stub and solution agree, hints exist, and every mutant in tests/NN/mutants/ is "
        "rejected by at least one test. Exits 1 on any problem.")
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="pytest runs at once (default: the number of cores)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show each run and each mutant's fate")


def run(args: argparse.Namespace, root: Path) -> int:
    lessons = chosen_lessons(root, args.lessons)
    if not lessons:
        raise KitError(f"no lessons found under {root}/tests")
    return verify(lessons, jobs=max(1, args.jobs), verbose=args.verbose)


def verify(lessons: list[Lesson], *, jobs: int, verbose: bool = False, out=None) -> int:
    out = out or sys.stdout  # looked up now: a default bound at import would outlive a redirect
    missing = missing_dependencies()
    if missing:
        print(f"verify: {sys.executable} cannot import {', '.join(missing)}, which every lesson's tests need.\n"
              "Activate the kit's environment (. .venv/bin/activate) or install it there:\n"
              "    pip install -c constraints.txt -e \".[dev]\"", file=out)
        return 2
    results = [LessonResult(lesson) for lesson in lessons]
    runs: list[Run] = []
    for result in results:
        lesson = result.lesson
        result.solutions, result.exercises = Run(lesson=lesson, kind="solutions"), Run(lesson=lesson, kind="exercises")
        result.mutants = [Run(lesson=lesson, kind="mutant", mutant=m) for m in lesson.mutants()]
        runs += [result.solutions, result.exercises, *result.mutants]
        for mutant in lesson.mutants():
            try:
                mutant_target(mutant, lesson)
            except Exception as exc:
                result.problem(f"{mutant.relative_to(lesson.root)}: {exc}")
    print(f"verify: {len(lessons)} lesson(s), {len(runs)} pytest runs on {jobs} worker(s)", file=out, flush=True)
    start = time.perf_counter()
    done = 0

    def finished(run: Run) -> None:
        nonlocal done
        done += 1
        if verbose:
            print(f"  [{done}/{len(runs)}] {run.lesson.name} {run.label}: {run.result.seconds:.1f} s", file=out, flush=True)

    execute(runs, jobs=jobs, on_done=finished)
    for result in results:  # after the runs: these import the lesson's modules, which must not be forked
        check_trees(result)
        judge_runs(result)
    _print_table(results, verbose, out)
    failed = [r for r in results if r.problems]
    for result in failed:
        print(f"\n{result.lesson.name}: {len(result.problems)} problem(s)", file=out)
        for problem in result.problems:
            print(f"  - {problem}", file=out)
    print(f"\nverify took {time.perf_counter() - start:.0f} s", file=out)
    print(f"verify: {len(results) - len(failed)} passed, {len(failed)} failed", file=out)
    return 1 if failed or not results else 0


def execute(runs: list[Run], *, jobs: int, on_done) -> None:
    """Every run, `jobs` at a time; on_done(run) as each ends.

    Forked from this process after grader.grading.sandbox.preload (torch, pytest, hypothesis and
    torch._dynamo imported once, about 3 s that each fresh process would pay again); where
    the system cannot fork, fresh subprocesses.
    """
    if not hasattr(os, "fork"):
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for run in pool.map(Run.execute, runs):
                on_done(run)
        return
    from grader.grading import sandbox

    sandbox.preload()

    def taken(job, run: RunResult) -> None:
        job.tag.take(run)
        on_done(job.tag)

    with tempfile.TemporaryDirectory(prefix="kata-verify-") as tmp:
        pending = (run.job(Path(tmp) / f"{number:03d}") for number, run in enumerate(runs))
        sandbox.run_jobs(pending, parallel=jobs, limits=_limits(), on_done=taken)


def _print_table(results: list[LessonResult], verbose: bool, out) -> None:
    rows = [("lesson", "solutions", "stubs", "mutants caught", "result")]
    for r in results:
        ref, stub = r.solutions, r.exercises
        caught = sum(bool(killers(m)) for m in r.mutants)
        rows.append((
            r.lesson.name,
            f"{ref.count(Outcome.PASSED)}/{len(ref.tests)} pass"
            + (f", {ref.count(Outcome.SKIPPED)} skip" if ref.count(Outcome.SKIPPED) else ""),
            f"{stub.count(Outcome.TODO, Outcome.FAILED)}/{len(stub.tests)} todo/fail",
            f"{caught}/{len(r.mutants)}",
            "ok" if not r.problems else "FAIL",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("", file=out)
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)
    if verbose:
        for r in results:
            for m in r.mutants:
                k = killers(m)
                fate = (f"caught by {k[0].split('::', 1)[-1]}" if k else
                        "SURVIVED" if m.tested else "not tested (see the problems below)")
                print(f"  {r.lesson.name} mutant {m.mutant.stem}: {fate}", file=out)
