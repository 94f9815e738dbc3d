"""``python -m grader mutate``: mutation testing of each lesson's tests with cosmic-ray.

cosmic-ray's operators (every one that takes no arguments: arithmetic, comparison, boolean,
unary and number replacement, break/continue, exceptions, decorators, zero-iteration loops)
make every single-point mutant of solutions/NN/*.py, and one more operator of the kit's own,
`kata/UnsetDefault`: a parameter's default that is not a number or a bool (cosmic-ray's number
and boolean operators mutate those) becomes ``object()``, which fails wherever it is used: the
mutant survives when no test ever relies on that default. Each mutant runs against its lesson's tests
as a hand-written mutant does (``pytest tests/NN --mutant=FILE -x``), forked from this process
by `grader.authoring.verify.execute`: a fresh ``cosmic-ray exec`` worker would pay
`import torch` again for each of ~1,500 runs.

A mutant no test can tell from the reference (``x - c`` where c is always 0, say) is recorded
in tests/NN/equivalent_mutants.toml with the reason; the score counts it as accounted for:

    [[mutant]]
    line = "shift = shift.masked_fill(shift.isinf(), 0)"     # the reference's line
    mutant = "shift = shift.masked_fill(shift.isinf(), 1)"   # the same line, mutated
    why = "the fill only lands where exp(x - shift) is 0 or nan either way"
    function = "logsumexp"   # optional: only in this def (where the same line is elsewhere too)

Annotations in a module with ``from __future__ import annotations`` are never evaluated, so
they are not mutated at all.

Results and the command that reproduces them: docs/MUTATION.md, whose table this command
writes (``--write-docs``) with each row's fingerprint: a hash of the files that decide the row
(the lesson's answer and tests, the grader.testing modules its tests import, this module). A
test (grader/tests/test_mutate.py) recomputes them, so a row whose files changed since it was
measured fails CI, naming the command that measures it again.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import os
import re
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grader.lessons import KitError, Lesson, chosen_lessons
from grader.results import Outcome

EQUIVALENTS = "equivalent_mutants.toml"
UNSET_DEFAULT = "kata/UnsetDefault"
DOCS = Path("docs/MUTATION.md")
PER_TEST_TIMEOUT = 30  # s; a mutant that loops forever is killed by pytest-timeout, as a learner's is


@dataclass
class Mutant:
    """One single-point mutation of a reference module."""

    lesson: Lesson
    stem: str  # the module mutated: solutions/NN/<stem>.py
    operator: str  # cosmic-ray's name, e.g. "core/ReplaceBinaryOperator_Add_Sub"
    occurrence: int
    code: str  # the whole mutated module
    lineno: int  # first line that differs (1-based)
    function: str  # the def or class holding it, "<module>" outside any
    line: str  # the reference's line, stripped
    mutated: str  # the mutant's line, stripped
    fate: str = "pending"  # killed, equivalent, survived, untested
    killer: str = ""  # the first test that failed, or why the run told nothing
    why: str = ""  # for an equivalent mutant, the recorded reason

    @property
    def label(self) -> str:
        return f"{self.lesson.name}/{self.stem}.py:{self.lineno} ({self.function}) {self.operator.removeprefix('core/')}#{self.occurrence}"


@dataclass
class LessonScore:
    lesson: Lesson
    mutants: list[Mutant] = field(default_factory=list)
    stale: list[dict] = field(default_factory=list)  # equivalence records that match no mutant

    def count(self, fate: str) -> int:
        return sum(m.fate == fate for m in self.mutants)

    @property
    def score(self) -> float:
        """Killed or recorded equivalent, as a share of every mutant (1.0 for none)."""
        if not self.mutants:
            return 1.0
        return (self.count("killed") + self.count("equivalent")) / len(self.mutants)


# --- making the mutants --------------------------------------------------------------------------


def operators():
    """(name, operator) for each of cosmic-ray's operators that needs no arguments."""
    import cosmic_ray.plugins

    for name in cosmic_ray.plugins.operator_names():
        cls = cosmic_ray.plugins.get_operator(name)
        if not cls.arguments():
            yield name, cls()


def mutants_of(lesson: Lesson) -> list[Mutant]:
    """Every single-point mutant of the lesson's reference modules."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    found = []
    for stem in lesson.modules("solutions"):
        path = lesson.dir("solutions") / f"{stem}.py"
        code = path.read_text(encoding="utf-8")
        lines = code.splitlines()
        holders = _holders(code)
        unevaluated = _annotations(code)
        tree = get_ast(code)
        for name, operator in operators():
            positions = [pos for node in ast_nodes(tree) for pos in operator.mutation_positions(node)]
            for occurrence, (start, end) in enumerate(positions):
                if any(a <= start and end <= b for a, b in unevaluated):
                    continue  # an annotation Python never evaluates: no run can tell the mutant apart
                mutated = mutate_code(code, operator, occurrence)
                if mutated is None or mutated == code:
                    continue
                new_lines = mutated.splitlines()
                lineno = next((i for i, (a, b) in enumerate(zip(lines, new_lines)) if a != b), min(len(lines), len(new_lines)))
                found.append(Mutant(
                    lesson=lesson, stem=stem, operator=name, occurrence=occurrence, code=mutated,
                    lineno=lineno + 1, function=holders.get(lineno + 1, "<module>"),
                    line=_code_of(lines[lineno] if lineno < len(lines) else ""),
                    mutated=_code_of(new_lines[lineno] if lineno < len(new_lines) else ""),
                ))
        found += _unset_defaults(lesson, stem, code, holders)
    return found


def _unset_defaults(lesson: Lesson, stem: str, code: str, holders: dict[int, str]) -> list[Mutant]:
    """One mutant per parameter default that is not made of numbers and bools alone: the default
    replaced by ``object()``, which no op accepts (and which is truthy, as True is: hence no
    bools). It survives when no test calls the function without that argument."""
    lines = code.splitlines(keepends=True)
    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        for occurrence, default in enumerate(d for d in defaults if not _numeric(d)):
            start, end = default.lineno - 1, default.end_lineno - 1
            # ast's columns count UTF-8 bytes, not characters
            head = lines[start].encode()[:default.col_offset].decode()
            tail = lines[end].encode()[default.end_col_offset:].decode()
            mutated = "".join([*lines[:start], head, "object()", tail, *lines[end + 1:]])
            found.append(Mutant(
                lesson=lesson, stem=stem, operator=UNSET_DEFAULT, occurrence=occurrence, code=mutated,
                lineno=start + 1, function=holders.get(start + 1, "<module>"), line=_code_of(lines[start]),
                mutated=_code_of(head + "object()" + tail),
            ))
    return found


def _numeric(expr: ast.expr) -> bool:
    """Whether an expression is made of number and bool constants alone (``-1``, ``2.0 ** 16``)."""
    leaves = [n for n in ast.walk(expr) if not isinstance(n, (ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop))]
    return all(isinstance(n, ast.Constant) and isinstance(n.value, (bool, int, float, complex)) for n in leaves)


def _annotations(code: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (start, end) positions, as (line, column), of the annotations in a module that has
    ``from __future__ import annotations``: kept as strings, never evaluated. None otherwise."""
    tree = ast.parse(code)
    if not any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in tree.body):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found += [a.annotation for a in every if a is not None and a.annotation is not None]
            found += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in found]


def _code_of(line: str) -> str:
    """A line without its indent and trailing comment: what an equivalence record quotes."""
    return line.split("  # ", 1)[0].strip()


def _holders(code: str) -> dict[int, str]:
    """Line number -> the innermost def or class around it, as "Class.method"."""
    holders: dict[int, str] = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    holders[line] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(code), "")
    return holders


# --- equivalent mutants ----------------------------------------------------------------------------


def equivalents(lesson: Lesson) -> list[dict]:
    """The lesson's recorded equivalent mutants; each has `line`, `mutant` and `why`."""
    path = lesson.tests_dir / EQUIVALENTS
    if not path.is_file():
        return []
    records = tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", [])
    for record in records:
        missing = {"line", "mutant", "why"} - set(record)
        if missing or not str(record.get("why", "")).strip():
            raise KitError(f"{path}: every [[mutant]] needs line, mutant and a non-empty why; {record} lacks "
                           f"{', '.join(sorted(missing)) or 'a reason'}")
    return records


def mark_equivalents(score: LessonScore) -> None:
    records = equivalents(score.lesson)
    used = set()
    for mutant in score.mutants:
        for number, record in enumerate(records):
            if ((_code_of(record["line"]), _code_of(record["mutant"])) == (mutant.line, mutant.mutated)
                    and record.get("function", mutant.function) == mutant.function):
                mutant.fate, mutant.why = "equivalent", record["why"]
                used.add(number)
                break
    score.stale = [record for number, record in enumerate(records) if number not in used]


# --- running them -----------------------------------------------------------------------------------


def run_mutants(mutants: list[Mutant], *, jobs: int, out) -> None:
    """Each pending mutant against its lesson's tests; sets its fate."""
    from grader.authoring.verify import Run, execute, killers

    with tempfile.TemporaryDirectory(prefix="kata-mutate-") as tmp:
        runs = []
        for number, mutant in enumerate(mutants):
            file = Path(tmp) / f"{mutant.lesson.name}_{number:04d}.py"
            file.write_text(f'{mutant.code}\nTARGET = "{mutant.stem}"\n', encoding="utf-8")
            run = Run(lesson=mutant.lesson, kind="mutant", mutant=file, extra=(f"--timeout={PER_TEST_TIMEOUT}",))
            run.tag = mutant
            runs.append(run)
        done = 0
        start = time.perf_counter()

        def finished(run) -> None:
            nonlocal done
            done += 1
            mutant: Mutant = run.tag
            failing = killers(run)
            if run.failed_to_run:
                mutant.fate, mutant.killer = "untested", run.failed_to_run
            elif failing or any(t.outcome in (Outcome.BROKEN, Outcome.TODO) for t in run.tests):
                mutant.fate = "killed"  # a mutant the module cannot even load with is rejected too
                mutant.killer = failing[0].split("::", 1)[-1] if failing else "does not load"
            elif run.result.collect_errors:
                mutant.fate, mutant.killer = "untested", run.result.collect_errors[0].message.splitlines()[0]
            else:
                mutant.fate = "survived"
            if done % 50 == 0 or done == len(runs):
                print(f"  {done}/{len(runs)} mutants run, {time.perf_counter() - start:.0f} s", file=out, flush=True)

        execute(runs, jobs=jobs, on_done=finished)


# --- the figures in docs/MUTATION.md ------------------------------------------------------------------


def fingerprint(lesson: Lesson) -> str:
    """A hash of the files that decide a lesson's row: its answer (solutions/NN), its tests
    (tests/NN but its hand-written mutants and hints), the grader.testing modules they import
    (directly or through one another) and this module, which makes the mutants."""
    import grader.testing

    testing = Path(grader.testing.__file__).parent
    files = {f"{lesson.name}/{p.relative_to(lesson.root).as_posix()}": p for tree in ("solutions", "tests")
             for p in lesson.dir(tree).rglob("*") if p.is_file() and _decides(p.relative_to(lesson.dir(tree)))}
    files |= {f"grader/testing/{p.name}": p for p in _testing_modules(lesson, testing)}
    files["grader/authoring/mutate.py"] = Path(__file__)
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:12]


def _decides(relative: Path) -> bool:
    """Whether a file of a lesson's folder can change what its mutants do (hints, the
    hand-written mutants and the transcript of what they print cannot; neither can Python's
    caches)."""
    return (relative.parts[0] not in ("mutants", "__pycache__", "hints.md", "transcript.md")
            and relative.suffix != ".pyc")


def _testing_modules(lesson: Lesson, testing: Path) -> list[Path]:
    """The grader.testing modules the lesson's tests import, and those they import in turn."""
    seen: set[Path] = set()
    todo = [p for p in lesson.tests_dir.glob("*.py")]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader.testing"):
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.startswith("grader.testing")]
            for name in names:
                parts = name.split(".")[2:]
                path = testing / (f"{parts[0]}.py" if parts else "__init__.py")
                if path.is_file() and path not in seen:
                    seen.add(path)
                    todo.append(path)
    return sorted(seen)


TABLE = re.compile(r"^```\n(lesson +mutants[^\n]*\n(?:[^`\n][^\n]*\n)*)```$", re.MULTILINE)
HEADER = ("lesson", "mutants", "killed", "equivalent", "survived", "untested", "score", "measured", "fingerprint")


def documented(root: Path) -> dict[str, list[str]]:
    """The rows of docs/MUTATION.md's table, by lesson: its cells as written."""
    match = TABLE.search((root / DOCS).read_text(encoding="utf-8"))
    if match is None:
        raise KitError(f"{root / DOCS} has no table of scores (a fenced block whose first line starts with 'lesson  mutants')")
    return {cells[0]: cells for cells in (line.split() for line in match.group(1).splitlines()[1:]) if cells}


def write_docs(root: Path, scores: list[LessonScore], today: str | None = None) -> None:
    """Put the measured lessons' rows in docs/MUTATION.md's table, each with today's date and its
    fingerprint; the other rows stay as they were."""
    path = root / DOCS
    rows = documented(root)
    today = today or datetime.date.today().isoformat()
    for s in scores:
        rows[s.lesson.name] = [*_cells(s), today, fingerprint(s.lesson)]
    table = [list(HEADER), *(rows[name] for name in sorted(rows))]
    widths = [max(len(row[i]) for row in table if i < len(row)) for i in range(len(HEADER))]
    text = "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n" for row in table)
    old = path.read_text(encoding="utf-8")
    match = TABLE.search(old)
    path.write_text(old[:match.start(1)] + text + old[match.end(1):], encoding="utf-8")


def _cells(s: LessonScore) -> list[str]:
    return [s.lesson.name, str(len(s.mutants)), str(s.count("killed")), str(s.count("equivalent")),
            str(s.count("survived")), str(s.count("untested")), f"{100 * s.score:.1f}%"]


# --- the command -----------------------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.description = (
        "Mutation testing with cosmic-ray: every single-point mutant of solutions/NN/*.py runs against "
        "the lesson's tests. A mutant is killed when a test fails, equivalent when "
        f"tests/NN/{EQUIVALENTS} records why no test can tell it apart, and survives otherwise. "
        "Exits 1 when a lesson scores under --fail-under.")
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="pytest runs at once (default: the number of cores)")
    parser.add_argument("--fail-under", type=float, default=95.0, metavar="PERCENT",
                        help="the least share of mutants killed or recorded equivalent, per lesson (default 95)")
    parser.add_argument("--list", action="store_true", help="list the mutants without running them")
    parser.add_argument("-v", "--verbose", action="store_true", help="each mutant's fate, and the equivalent ones")
    parser.add_argument("--write-docs", action="store_true",
                        help=f"put the measured lessons' rows, dated and fingerprinted, in {DOCS.as_posix()}'s table")


def run(args: argparse.Namespace, root: Path) -> int:
    try:
        import cosmic_ray  # noqa: F401
    except ImportError:
        print("mutate: cosmic-ray is not installed here; install the kit's authoring tools:\n"
              '    pip install -c constraints.txt -e ".[dev]"', file=sys.stderr)
        return 2
    lessons = chosen_lessons(root, args.lessons)
    return mutate(lessons, jobs=max(1, args.jobs), fail_under=args.fail_under, list_only=args.list,
                  verbose=args.verbose, docs_root=root if args.write_docs else None)


def mutate(lessons: list[Lesson], *, jobs: int, fail_under: float = 95.0, list_only: bool = False,
           verbose: bool = False, docs_root: Path | None = None, out=None) -> int:
    out = out or sys.stdout
    scores = [LessonScore(lesson, mutants_of(lesson)) for lesson in lessons]
    for score in scores:
        mark_equivalents(score)
    pending = [m for s in scores for m in s.mutants if m.fate == "pending"]
    if list_only:
        for score in scores:
            for m in score.mutants:
                print(f"{m.label}: {m.line}  ->  {m.mutated}" + ("  [equivalent]" if m.fate == "equivalent" else ""), file=out)
        return 0
    print(f"mutate: {sum(len(s.mutants) for s in scores)} mutants of {len(scores)} lesson(s), "
          f"{len(pending)} to run on {jobs} worker(s)", file=out, flush=True)
    start = time.perf_counter()
    run_mutants(pending, jobs=jobs, out=out)
    failed = _report(scores, fail_under, verbose, out)
    print(f"\nmutate took {time.perf_counter() - start:.0f} s", file=out)
    if docs_root is not None:
        write_docs(docs_root, scores)
        print(f"mutate: {len(scores)} row(s) written to {DOCS.as_posix()}", file=out)
    return 1 if failed else 0


def _report(scores: list[LessonScore], fail_under: float, verbose: bool, out) -> bool:
    rows = [HEADER[:7], *(_cells(s) for s in scores)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("", file=out)
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip(), file=out)
    failed = False
    for s in scores:
        shown = [m for m in s.mutants if m.fate in ("survived", "untested") or (verbose and m.fate != "pending")]
        if shown or s.stale:
            print(f"\n{s.lesson.name}:", file=out)
        for m in shown:
            note = {"killed": f"killed by {m.killer}", "equivalent": f"equivalent: {m.why}",
                    "untested": f"UNTESTED: {m.killer}", "survived": "SURVIVED"}[m.fate]
            print(f"  {m.label}: {note}\n      - {m.line}\n      + {m.mutated}", file=out)
        for record in s.stale:
            print(f"  stale record in tests/{s.lesson.name}/{EQUIVALENTS}: no mutant turns {record['line']!r} "
                  f"into {record['mutant']!r}; remove it", file=out)
        if 100 * s.score < fail_under or s.stale:
            failed = True
    return failed
