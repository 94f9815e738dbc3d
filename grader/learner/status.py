"""``kata status``: where a learner stands, lesson by lesson.

Each lesson's tests run against exercises/ in a pytest subprocess of their own (several at
once, one per core), so a lesson that hangs or does not even import cannot stop the others.
Results are cached in .kata/cache/status.json under a fingerprint of everything that can change
them (the learner's files, the lesson's tests, the grader): a second ``kata status`` with
nothing changed answers at once, and editing one lesson re-runs that lesson only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from grader import source_digest
from grader.files import write_json
from grader.lessons import Lesson, chosen_lessons
from grader.progress import Progress
from grader.results import LessonSummary, summarize
from grader.runs import run_pytest
from grader.tables import Column, format_table

CACHE_FILE = Path(".kata/cache/status.json")
CACHE_VERSION = 2  # bump when LessonSummary changes shape


# --- fingerprints and the cache -------------------------------------------------------------


def fingerprint(lesson: Lesson) -> str:
    """A hash of every file whose change can change the lesson's results."""
    digest = hashlib.sha256(source_digest().encode())
    files = [
        *_files_under(lesson.dir("exercises")), *_files_under(lesson.tests_dir),
        lesson.root / "conftest.py", lesson.root / "pyproject.toml",
    ]
    for path in files:
        if path.is_file():
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if "__pycache__" not in p.parts and "mutants" not in p.parts)


class Cache:
    """{lesson: {"key": fingerprint, "status": LessonSummary}} in .kata/cache/status.json."""

    def __init__(self, root: Path, enabled: bool = True) -> None:
        self.path = root / CACHE_FILE
        self.enabled = enabled
        self.entries: dict = {}
        if enabled and self.path.is_file():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("version") == CACHE_VERSION:
                    self.entries = data["lessons"]
            except (ValueError, KeyError, TypeError):  # noqa: PERF203
                self.entries = {}  # a damaged cache is only a slower answer

    def get(self, lesson: Lesson, key: str) -> LessonSummary | None:
        entry = self.entries.get(lesson.name) if self.enabled else None
        if entry and entry.get("key") == key:
            return LessonSummary.from_json(entry["status"])
        return None

    def put(self, lesson: Lesson, key: str, status: LessonSummary) -> None:
        self.entries[lesson.name] = {"key": key, "status": status.to_json()}

    def save(self) -> None:
        write_json(self.path, {"version": CACHE_VERSION, "lessons": self.entries})


def check(lesson: Lesson) -> LessonSummary:
    """Run the lesson's tests against exercises/ now."""
    return summarize(lesson.name, run_pytest(lesson.root, [f"exercises/{lesson.name}"]))


def statuses(lessons: list[Lesson], *, cache: Cache, jobs: int, progress=None, ran=None) -> list[LessonSummary]:
    """Every lesson's standing, from the cache where nothing changed, else by running it.

    `progress` (a grader.progress.Progress) steps as each lesson that had to run finishes, and
    its name goes into the list `ran`, where given.
    """
    keys = {lesson.name: fingerprint(lesson) for lesson in lessons}
    found = {lesson.name: cache.get(lesson, keys[lesson.name]) for lesson in lessons}
    todo = [lesson for lesson in lessons if found[lesson.name] is None]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(check, lesson): lesson for lesson in todo}
        for future in as_completed(futures):
            lesson = futures[future]
            found[lesson.name] = future.result()
            cache.put(lesson, keys[lesson.name], found[lesson.name])
            if ran is not None:
                ran.append(lesson.name)
            if progress:
                progress.advance()
                progress.step(lesson.name)
    if todo:
        cache.save()
    return [found[lesson.name] for lesson in lessons]


# --- the commands ----------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="lessons run at once (default: the number of cores)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="after the table, name the lessons whose tests ran (the others came from the cache)")
    add_no_cache(parser)


def add_no_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cache", action="store_true", help="run the tests even where nothing changed")


def run(args: argparse.Namespace, root: Path) -> int:
    cache = Cache(root, enabled=not args.no_cache)
    lessons = chosen_lessons(root, args.lessons)
    # A bar only while the learner watches the terminal, erased before the table: piped (to a
    # file, to less), the table is the whole output.
    watched = sys.stdout.isatty() and sys.stderr.isatty()
    progress = Progress(len(lessons), "lessons", verb=("check", "checked"), log=False) if watched else None
    ran: list[str] = []
    results = statuses(lessons, cache=cache, jobs=args.jobs, progress=progress, ran=ran)
    if progress:
        progress.close()
    print_table(results)
    if args.verbose:
        print(f"\nran: {', '.join(ran) or 'none (every lesson from the cache)'}")
    return 0


def print_table(results: list[LessonSummary], out=None) -> None:
    out = out or sys.stdout  # looked up now: a default bound at import would outlive a redirect
    current = next((r for r in results if not r.done), None)
    rows = [["lesson", "tests", "points", "state"]]
    for r in results:
        state = str(r.state)
        if r.problem:
            state += f": {r.problem}"
        elif r is current and r.first_todo:
            state += f"  (next TODO: {r.first_todo})"
        rows.append([r.lesson, f"{r.passed}/{r.total}" if r.total else "-",
                     f"{_num(r.points)}/{_num(r.max_points)}" if r.total else "-", state])
    done = sum(r.done for r in results)
    total_points = f"{_num(sum(r.points for r in results))}/{_num(sum(r.max_points for r in results))}"
    rows.append(["total", "", total_points, f"{done} of {len(results)} lessons done"])
    columns = [Column("<", fit=True), Column(">", 7), Column(">", 9), Column("<")]
    for line in format_table(rows, columns, sep="  "):
        print(line, file=out)
    if current:
        print(f"\nNext: pytest exercises/{current.lesson}   (or: kata watch {current.lesson})", file=out)


def _num(x: float) -> str:
    return f"{x:g}"

