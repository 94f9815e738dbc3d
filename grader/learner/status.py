"""``kata status`` and ``kata next``: where a learner stands, lesson by lesson.

Each lesson's tests run against exercises/ in a pytest subprocess of their own (several at
once, one per core), so a lesson that hangs or does not even import cannot stop the others.
Results are cached in .kata/cache/status.json under a fingerprint of everything that can change
them (the learner's files, the lesson's tests, the harness): a second ``kata status`` with
nothing changed answers at once, and editing one lesson re-runs that lesson only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from grader import source_files
from grader.files import write_json
from grader.lessons import Lesson, all_lessons, chosen_lessons
from grader.runs import PytestRun, run_pytest

CACHE_FILE = Path(".kata/cache/status.json")
CACHE_VERSION = 1  # bump when LessonStatus changes shape


@dataclass
class LessonStatus:
    """One lesson's standing. Skipped tests (no GPU, say) count in neither `passed` nor `total`."""

    lesson: str
    state: str  # "done", "in progress", "not started", "broken" or "error"
    passed: int = 0
    total: int = 0
    points: float = 0.0
    max_points: float = 0.0
    first_todo: str | None = None  # "exercises/03_broadcast/broadcast.py:40"
    problem: str | None = None  # why a broken / error lesson could not be graded, one line

    @property
    def done(self) -> bool:
        return self.state == "done"


def summarize(name: str, run: PytestRun) -> LessonStatus:
    """A lesson's standing from its pytest run."""
    if run.exitstatus is None:
        last = run.output.strip().splitlines()[-1:] or ["no output"]
        return LessonStatus(name, "error", problem=f"pytest did not finish: {last[0]}")
    counted = [t for t in run.tests if t["outcome"] != "skipped"]
    if run.collect_errors and not counted:
        return LessonStatus(name, "error", problem=_first_line(run.collect_errors[0]["message"]))
    passed = [t for t in counted if t["outcome"] == "passed"]
    todos = [t for t in counted if t["outcome"] == "todo"]
    broken = [t for t in counted if t["outcome"] == "broken"]
    status = LessonStatus(
        name, "in progress", passed=len(passed), total=len(counted),
        points=sum(t["points"] for t in passed), max_points=sum(t["points"] for t in counted),
        first_todo=next((t.get("where") for t in todos if t.get("where")), None),
    )
    if broken:
        status.state, status.problem = "broken", _first_line(broken[0]["message"])
    elif counted and len(passed) == len(counted):
        status.state = "done"
    elif not counted:
        status.state, status.problem = "error", "no tests were collected"
    elif len(todos) == len(counted):
        status.state = "not started"
    return status


def _first_line(message: str) -> str:
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


# --- fingerprints and the cache -------------------------------------------------------------


def fingerprint(lesson: Lesson) -> str:
    """A hash of every file whose change can change the lesson's results."""
    digest = hashlib.sha256()
    files = [
        *_files_under(lesson.dir("exercises")), *_files_under(lesson.tests_dir), *source_files(),
        lesson.root / "conftest.py", lesson.root / "pyproject.toml",
    ]
    for path in files:
        if path.is_file():
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if "__pycache__" not in p.parts and "mutants" not in p.parts)


class Cache:
    """{lesson: {"key": fingerprint, "status": LessonStatus}} in .kata/cache/status.json."""

    def __init__(self, root: Path, enabled: bool = True) -> None:
        self.path = root / CACHE_FILE
        self.enabled = enabled
        self.entries: dict = {}
        if enabled and self.path.is_file():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("version") == CACHE_VERSION:
                    self.entries = data["lessons"]
            except (ValueError, KeyError, TypeError):
                self.entries = {}  # a damaged cache is only a slower answer

    def get(self, lesson: Lesson, key: str) -> LessonStatus | None:
        entry = self.entries.get(lesson.name) if self.enabled else None
        if entry and entry.get("key") == key:
            return LessonStatus(**entry["status"])
        return None

    def put(self, lesson: Lesson, key: str, status: LessonStatus) -> None:
        self.entries[lesson.name] = {"key": key, "status": asdict(status)}

    def save(self) -> None:
        write_json(self.path, {"version": CACHE_VERSION, "lessons": self.entries})


def check(lesson: Lesson) -> LessonStatus:
    """Run the lesson's tests against exercises/ now."""
    return summarize(lesson.name, run_pytest(lesson.root, [f"exercises/{lesson.name}"]))


def statuses(lessons: list[Lesson], *, cache: Cache, jobs: int, progress=None) -> list[LessonStatus]:
    """Every lesson's standing, from the cache where nothing changed, else by running it.

    progress(done, total, name) is called as each lesson that had to run finishes.
    """
    keys = {lesson.name: fingerprint(lesson) for lesson in lessons}
    found = {lesson.name: cache.get(lesson, keys[lesson.name]) for lesson in lessons}
    todo = [lesson for lesson in lessons if found[lesson.name] is None]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(check, lesson): lesson for lesson in todo}
        for done, future in enumerate(as_completed(futures), 1):
            lesson = futures[future]
            found[lesson.name] = future.result()
            cache.put(lesson, keys[lesson.name], found[lesson.name])
            if progress:
                progress(done, len(todo), lesson.name)
    if todo:
        cache.save()
    return [found[lesson.name] for lesson in lessons]


def first_unfinished(root: Path, cache: Cache | None = None) -> Lesson | None:
    """The first lesson, in order, that is not done; None when every lesson passes.

    Lessons run one at a time and the search stops at the first unfinished one, so on a fresh
    kit this costs a single lesson's run.
    """
    cache = cache or Cache(root)
    for lesson in all_lessons(root):
        (status,) = statuses([lesson], cache=cache, jobs=1)
        if not status.done:
            return lesson
    return None


# --- the commands ----------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "status":
        parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
        parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                            help="lessons run at once (default: the number of cores)")
    parser.add_argument("--no-cache", action="store_true", help="run the tests even where nothing changed")


def run(args: argparse.Namespace, root: Path) -> int:
    cache = Cache(root, enabled=not args.no_cache)
    if args.command == "next":
        return show_next(root, cache)
    lessons = chosen_lessons(root, args.lessons)
    results = statuses(lessons, cache=cache, jobs=args.jobs, progress=_progress_printer(len(lessons)))
    print_table(results)
    return 0


def _progress_printer(count: int):
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, name: str) -> None:
        if tty:  # one line, rewritten in place
            end = "\n" if done == total else ""
            print(f"\r\033[Kchecked {done}/{total} lessons (last: {name})", end=end, file=sys.stderr, flush=True)
        else:
            print(f"checked {name} ({done}/{total})", file=sys.stderr, flush=True)
    return progress


def print_table(results: list[LessonStatus], out=None) -> None:
    out = out or sys.stdout  # looked up now: a default bound at import would outlive a redirect
    current = next((r for r in results if not r.done), None)
    width = max(len(r.lesson) for r in results)
    print(f"{'lesson':<{width}}  {'tests':>7}  {'points':>9}  state", file=out)
    for r in results:
        tests = f"{r.passed}/{r.total}" if r.total else "-"
        points = f"{_num(r.points)}/{_num(r.max_points)}" if r.total else "-"
        line = f"{r.lesson:<{width}}  {tests:>7}  {points:>9}  {r.state}"
        if r.problem:
            line += f": {r.problem}"
        elif r is current and r.first_todo:
            line += f"  (next TODO: {r.first_todo})"
        print(line, file=out)
    done = sum(r.done for r in results)
    total_points = f"{_num(sum(r.points for r in results))}/{_num(sum(r.max_points for r in results))}"
    print(f"{'total':<{width}}  {'':>7}  {total_points:>9}  {done} of {len(results)} lessons done", file=out)
    if current:
        print(f"\nNext: pytest exercises/{current.lesson}   (or: kata watch {current.lesson})", file=out)


def show_next(root: Path, cache: Cache) -> int:
    lesson = first_unfinished(root, cache)
    if lesson is None:
        print("Every lesson passes. Well done! `kata status` shows your points.")
        return 0
    (status,) = statuses([lesson], cache=cache, jobs=1)
    print(f"Next: {lesson.name} ({status.passed}/{status.total} tests pass, {status.state})")
    if status.problem:
        print(f"  fix first: {status.problem}")
    if status.first_todo:
        print(f"  open {status.first_todo} and replace the TODO there with your code")
    print(f"  run:   pytest exercises/{lesson.name}")
    print(f"  watch: kata watch {lesson.name}   (re-runs the tests each time you save)")
    print(f"  stuck: kata hint {lesson.name}")
    return 0


def _num(x: float) -> str:
    return f"{x:g}"

