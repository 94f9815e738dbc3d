"""``kata status``: where a learner stands, lesson by lesson.

Each lesson's tests run against exercises/ in a process of their own, as many at once as this
process may use CPUs, each under the limits of a learner's own run (grader.grading.sandbox:
``Limits.ungraded``), so a lesson that hangs, crashes or does not even import cannot stop the
others: it is named, and the others are graded. Where there are more lessons to run than CPUs,
the runs are forked from one process that has imported torch, pytest and hypothesis once
(grader/forking.py, as ``kata verify`` forks its runs), not each a fresh ``python -m pytest``
that imports torch again; with no more than that, each is a fresh process, all at once, which
costs no more than the preloading would (docs/PERFORMANCE.md has the figures). The preloading
process is itself a child, so the caller (``kata next``, ``kata watch``)
keeps its own imports and environment, and the learner's modules are imported in the runs
only. The forked runs use ``kata grade``'s hypothesis profile: the examples and verdicts of
the learner's own ``pytest``, without shrinking a failure to its smallest example, which status
never shows. Where os.fork is missing (Windows), or that child reports no result for a lesson,
the lesson runs in a fresh subprocess instead (grader/runs.py).

Results are cached in .kata/cache/status.json under a fingerprint of everything that can change
them (the learner's files, the lesson's tests, the grader): a second ``kata status`` with
nothing changed answers at once, and editing one lesson re-runs that lesson only. A damaged
cache is only a slower answer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from grader import forking, source_digest
from grader.files import write_json
from grader.lessons import Lesson, chosen_lessons
from grader.progress import Progress
from grader.results import LessonSummary, summarize
from grader.runs import RUN_TIMEOUT, pytest_args, run_pytest
from grader.tables import Column, format_table

CACHE_FILE = Path(".kata/cache/status.json")
CACHE_VERSION = 2  # bump when LessonSummary changes shape


# --- fingerprints and the cache -------------------------------------------------------------


def fingerprint(lesson: Lesson) -> str:
    """A hash of every file whose change can change the lesson's results."""
    digest = hashlib.sha256(source_digest().encode())
    files = [
        *_files_under(lesson.dir("exercises")),
        *_files_under(lesson.tests_dir),
        lesson.root / "conftest.py",
        lesson.root / "pyproject.toml",
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
            except (ValueError, KeyError, TypeError):
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


def statuses(
    lessons: list[Lesson], *, cache: Cache, jobs: int, progress=None, ran=None, timeout: float = RUN_TIMEOUT
) -> list[LessonSummary]:
    """Every lesson's standing, from the cache where nothing changed, else by running it, `jobs`
    runs at once, each stopped after `timeout` seconds.

    `progress` (a grader.progress.Progress) steps as each lesson that had to run finishes, and
    its name goes into the list `ran`, where given.
    """
    keys = {lesson.name: fingerprint(lesson) for lesson in lessons}
    found = {lesson.name: cache.get(lesson, keys[lesson.name]) for lesson in lessons}
    todo = [lesson for lesson in lessons if found[lesson.name] is None]

    def finished(lesson: Lesson, status: LessonSummary) -> None:
        found[lesson.name] = status
        cache.put(lesson, keys[lesson.name], status)
        if ran is not None:
            ran.append(lesson.name)
        if progress:
            progress.advance()
            progress.step(lesson.name)

    if todo:
        check(todo, jobs=max(1, jobs), timeout=timeout, on_done=finished)
        cache.save()
    return [found[lesson.name] for lesson in lessons]


def check(
    lessons: list[Lesson], *, jobs: int, timeout: float = RUN_TIMEOUT, on_done: Callable[[Lesson, LessonSummary], None]
) -> None:
    """Run the lessons' tests against exercises/ now, `jobs` at once; on_done(lesson, status)
    as each finishes.

    Forked where a CPU runs more than one lesson and the system can fork; else, and for any
    lesson the forked runs did not report, in fresh subprocesses. (The preloading costs more
    than one fresh run's imports: it pays for itself from a CPU's second run on.)
    """
    left = _forked(lessons, jobs, timeout, on_done) if len(lessons) > jobs and hasattr(os, "fork") else lessons
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_fresh, lesson, timeout): lesson for lesson in left}
        for future in as_completed(futures):
            on_done(futures[future], future.result())


def _fresh(lesson: Lesson, timeout: float) -> LessonSummary:
    return summarize(lesson.name, run_pytest(lesson.root, [f"exercises/{lesson.name}"], timeout=timeout))


def _forked(
    lessons: list[Lesson], jobs: int, timeout: float, on_done: Callable[[Lesson, LessonSummary], None]
) -> list[Lesson]:
    """The lessons run by a child of this process that preloads and forks a run for each
    (`_runner`), their standings read back from it as each run ends; the lessons it did not
    report (it could not import torch, or died), for the caller to run some other way."""
    left = {lesson.name: lesson for lesson in lessons}
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()  # (else what this process has buffered would be written twice)
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        forking.end_child(lambda: _runner(lessons, jobs, timeout, write_fd))
    os.close(write_fd)
    try:
        with open(read_fd, encoding="utf-8") as reports:
            for line in reports:
                try:
                    name, status = json.loads(line)
                    status = LessonSummary.from_json(status)
                except (ValueError, TypeError, KeyError):
                    break  # a line cut short: the runner died while writing it
                if name in left:
                    on_done(left.pop(name), status)
    except BaseException:
        # (Ctrl-C reaches this process only: the runner is in a session of its own, so that it
        # is told once, and stops its runs before it ends)
        os.kill(pid, signal.SIGINT)
        raise
    finally:
        os.waitpid(pid, 0)
    return list(left.values())


def _runner(lessons: list[Lesson], jobs: int, timeout: float, report_fd: int) -> int:
    """In the child: import what runs need, fork one run per lesson (grader.grading.sandbox,
    without its OS boundary) and write each lesson's standing to `report_fd` as a JSON line
    [name, LessonSummary] as its run ends."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # its runs write to files of their own; a failure here is said by the fresh runs
        os.dup2(null, fd)
    try:
        from grader.grading import sandbox
    except ImportError:  # a student release ships no class grading: each lesson runs fresh
        return 1
    sandbox.preload()
    with open(report_fd, "w", encoding="utf-8") as reports, tempfile.TemporaryDirectory(prefix="kata-status-") as tmp:

        def done(job, run) -> None:
            reports.write(json.dumps([job.name, summarize(job.name, run).to_json()]) + "\n")
            reports.flush()

        jobs_to_run = (
            sandbox.Job(
                name=lesson.name,
                workdir=lesson.root,
                home=Path(tmp) / lesson.name,
                args=pytest_args(f"exercises/{lesson.name}"),
                guarded=False,
            )
            for lesson in lessons
        )
        sandbox.run_jobs(jobs_to_run, parallel=jobs, limits=sandbox.Limits.ungraded(timeout), on_done=done)
    return 0


# --- the commands ----------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names or numbers (default: all)")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=usable_cpus(),
        help="lessons run at once (default: the number of CPUs this process may use)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="after the table, name the lessons whose tests ran (the others came from the cache)",
    )
    add_no_cache(parser)


def usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity: a container's or taskset's share)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1


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
        rows.append(
            [
                r.lesson,
                f"{r.passed}/{r.total}" if r.total else "-",
                f"{_num(r.points)}/{_num(r.max_points)}" if r.total else "-",
                state,
            ]
        )
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
