"""``kata grade``: grade a whole class's .py work, without trusting it.

    kata grade CLASS_DIR --out RESULTS_DIR [--jobs N] [--lessons ...] [--no-speed] [--shard I/N]
    kata grade --merge RESULTS_DIR... --out RESULTS_DIR

CLASS_DIR holds one folder per student, each with an ``exercises/`` tree (whole, partial or
broken). Every (student, lesson) runs in a grading copy of its own: the kit's conftest.py and
pyproject.toml, the lesson's tests (no mutants), the stubs with the student's files laid over
them; no ``solutions/``. The runs are forked from one preloaded process, under limits
(grader/sandbox.py), and report over a channel the parent owns (grader/channel.py).

RESULTS_DIR gets:

    students/<name>.json     kata report --json's shape (exercism v3), plus points and reasons
    logs/<name>/<lesson>.txt what the lesson's run printed (cut to --max-output)
    class.csv                student x lesson points, total, flags
    summary.txt              the table printed at the end, and every problem, one line each

Each student's JSON is written, atomically, the moment the student is done, with a fingerprint
of everything that decided it (the student's files, the kit's tests and grader, the options): an
interrupted run loses only students in progress, and a re-run skips students whose fingerprint
did not change. Identical submissions of a lesson (an untouched stub, above all) run once.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from grader import PACKAGE, source_files
from grader.files import write_json, write_text
from grader.lessons import KitError, Lesson, chosen_lessons
from grader.learner.report import exercism
from grader.runs import PytestRun
from grader.learner.status import summarize

SCHEMA = 1  # bump when a student's JSON changes meaning: every student is graded again
MAX_FILE = 1 << 20  # bytes: a larger file in a student's lesson folder is ignored
# Files a student may not bring: they would run inside pytest, not under test.
REFUSED = {"conftest.py", "__init__.py"}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("class_dir", nargs="?", type=Path, metavar="CLASS_DIR",
                        help="one folder per student, each holding an exercises/ tree")
    parser.add_argument("--out", type=Path, required=True, metavar="RESULTS_DIR",
                        help="where the results go (students/*.json, class.csv, summary.txt)")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="RESULTS_DIR",
                        help="grade nothing: combine these results folders (shards) into --out")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="lesson runs at once (default: the number of cores)")
    parser.add_argument("--lessons", nargs="+", metavar="LESSON", help="only these lessons (default: all)")
    parser.add_argument("--students", nargs="+", metavar="NAME", help="only these students (default: all)")
    parser.add_argument("--shard", type=_shard, metavar="I/N",
                        help="grade the I-th of N slices of the class (1 <= I <= N); merge them with --merge")
    parser.add_argument("--no-speed", action="store_true", help="leave out the speed tests")
    parser.add_argument("--force", action="store_true", help="grade again students whose files did not change")
    limits = parser.add_argument_group("limits for one student's lesson")
    limits.add_argument("--timeout", type=float, default=180.0, metavar="S",
                        help="wall-clock seconds (default 180; CPU seconds: 1.25x this)")
    limits.add_argument("--test-timeout", type=float, default=15.0, metavar="S", help="seconds per test (default 15)")
    limits.add_argument("--memory", type=_size, default=4 << 30, metavar="SIZE",
                        help="memory beyond what the grader itself maps, e.g. 4G (default) or 512M")
    limits.add_argument("--max-file", type=_size, default=256 << 20, metavar="SIZE",
                        help="the size any one file it writes may reach, its output included (default 256M)")
    limits.add_argument("--max-output", type=_size, default=64 << 10, metavar="SIZE",
                        help="output kept in the log, e.g. 64K (default); the middle of more is cut")


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N, like 2/8, not {text!r}") from None
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"{text}: I must be between 1 and N")
    return i, n


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        if text[-1:].upper() in units:
            return int(float(text[:-1]) * units[text[-1].upper()])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size like 512M or 4G, not {text!r}") from None


def run(args: argparse.Namespace, root: Path) -> int:
    if args.merge:
        return merge(args.merge, args.out)
    if args.class_dir is None:
        raise KitError("say which class to grade: kata grade CLASS_DIR --out RESULTS_DIR "
                       "(or combine shards with kata grade --merge RESULTS_DIR... --out RESULTS_DIR)")
    if not args.class_dir.is_dir():
        raise KitError(f"{args.class_dir} is not a folder: CLASS_DIR holds one folder per student")
    if os.name != "posix" or not hasattr(os, "fork"):
        raise KitError("kata grade needs fork() and resource limits (Linux or macOS)")
    from grader.grading.sandbox import Limits

    lessons = chosen_lessons(root, args.lessons)
    # CPU time beyond the wall clock: only threads spinning in parallel get there first.
    limits = Limits(wall=args.timeout, cpu=1.25 * args.timeout, memory=args.memory, output=args.max_output,
                    file_size=args.max_file,
                    test_timeout=args.test_timeout)
    grading = Grading(root, lessons, args.out, limits, speed=not args.no_speed, jobs=max(1, args.jobs))
    roster = [s for s in find_students(args.class_dir) if s.folder.resolve() != args.out.resolve()]
    if args.students:
        unknown = sorted(set(args.students) - {s.name for s in roster})
        if unknown:
            raise KitError(f"no folder in {args.class_dir} for: {', '.join(unknown)}")
        roster = [s for s in roster if s.name in args.students]
    if args.shard:
        i, n = args.shard
        roster = roster[i - 1::n]
    return grading.run(roster, force=args.force)


# --- the class ------------------------------------------------------------------------------


@dataclass
class Student:
    name: str
    folder: Path
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # lesson -> {file name: bytes}
    ignored: list[str] = field(default_factory=list)  # files not taken, with why
    problem: str | None = None  # why the student cannot be graded at all
    fingerprint: str | None = None  # of everything that decides the grade (Grading.fingerprint)


def find_students(class_dir: Path) -> list[Student]:
    """One Student per folder of CLASS_DIR (hidden folders skipped), sorted by name."""
    return [Student(p.name, p) for p in sorted(class_dir.iterdir(), key=lambda p: p.name)
            if p.is_dir() and not p.name.startswith((".", "_"))]


def read_work(student: Student, lessons: list[Lesson]) -> None:
    """Take the student's .py files for `lessons`. Symbolic links are refused: a link to the kit's
    solutions/ would otherwise be read, by the grader, as the student's work."""
    exercises = student.folder / "exercises"
    if student.folder.is_symlink() or exercises.is_symlink():
        student.problem = "the folder or its exercises/ is a symbolic link (refused)"
        return
    if not exercises.is_dir():
        student.problem = f"no exercises/ folder (expected {student.folder}/exercises/NN_topic/*.py)"
        return
    for lesson in lessons:
        folder = exercises / lesson.name
        if folder.is_symlink():
            student.ignored.append(f"exercises/{lesson.name} (a symbolic link)")
            continue
        if not folder.is_dir():
            continue
        taken = {}
        for path in sorted(folder.iterdir()):
            rel = f"exercises/{lesson.name}/{path.name}"
            if path.suffix != ".py" or path.is_dir() and not path.is_symlink():
                continue
            if path.is_symlink():
                student.ignored.append(f"{rel} (a symbolic link)")
            elif path.name == "__init__.py" and not path.read_bytes().strip():
                continue  # the kit's own, empty: nothing to say
            elif path.name in REFUSED or path.name.startswith("test_"):
                student.ignored.append(f"{rel} (the grader does not take this file from students)")
            elif path.stat().st_size > MAX_FILE:
                student.ignored.append(f"{rel} (larger than {MAX_FILE >> 20} MiB)")
            else:
                taken[path.name] = path.read_bytes()
        student.files[lesson.name] = taken


@dataclass
class Kit:
    """The files a grading copy is made of, read once: a student's code that rewrites the kit's
    files on disk while it runs changes nothing for the students after it."""

    root: Path
    files: dict[str, bytes]  # path in the copy -> bytes (no solutions, no mutants)
    stubs: dict[str, dict[str, bytes]]  # lesson -> {file name: the stub's bytes}
    digest: str  # of the files and the grader's code

    @classmethod
    def read(cls, root: Path, lessons: list[Lesson]) -> "Kit":
        files, stubs = {}, {}
        for name in ("conftest.py", "pyproject.toml", "exercises/__init__.py"):
            files[name] = (root / name).read_bytes() if (root / name).is_file() else b""
        for lesson in lessons:
            stubs[lesson.name] = {p.name: p.read_bytes() for p in sorted(lesson.dir("exercises").glob("*"))
                                  if p.is_file() and "__pycache__" not in p.parts}
            stubs[lesson.name].setdefault("__init__.py", b"")
            for path in sorted(lesson.tests_dir.rglob("*")):
                rel = path.relative_to(root)
                if path.is_file() and "mutants" not in rel.parts and "__pycache__" not in rel.parts:
                    files[rel.as_posix()] = path.read_bytes()
        digest = hashlib.sha256()
        code = [(p.relative_to(PACKAGE).as_posix(), p.read_bytes()) for p in source_files()]
        for name, data in [*sorted(files.items()), *code]:
            digest.update(name.encode() + b"\0" + data + b"\0")
        return cls(root, files, stubs, digest.hexdigest())

    def overlay(self, lesson: str, work: dict[str, bytes]) -> dict[str, bytes]:
        """The student's files that differ from the stub (an untouched stub is no work)."""
        return {name: data for name, data in sorted(work.items()) if self.stubs[lesson].get(name) != data}

    def write_copy(self, folder: Path, lesson: str, overlay: dict[str, bytes]) -> None:
        for rel, data in self.files.items():
            if rel.startswith("tests/") and not rel.startswith(f"tests/{lesson}/"):
                continue
            _write(folder / rel, data)
        for name, data in {**self.stubs[lesson], **overlay}.items():
            _write(folder / "exercises" / lesson / name, data)


    def changed(self, folder: Path, lesson: str) -> list[str]:
        """The kit's files in a grading copy that are not as written (the run rewrote its tests?)."""
        expected = {rel: data for rel, data in self.files.items()
                    if not rel.startswith("tests/") or rel.startswith(f"tests/{lesson}/")}
        found = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts and p.parts[len(folder.parts)] != "exercises"}
        problems = [rel for rel in sorted(expected) if not (folder / rel).is_file() or (folder / rel).read_bytes() != expected[rel]]
        problems += sorted(rel for rel in found - set(expected) if rel.endswith(".py") or rel.endswith(".toml"))
        return problems


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _key(lesson: str, overlay: dict[str, bytes]) -> str:
    digest = hashlib.sha256(lesson.encode() + b"\0")
    for name, data in sorted(overlay.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


# --- grading --------------------------------------------------------------------------------


class Grading:
    def __init__(self, root: Path, lessons: list[Lesson], out: Path, limits, *, speed: bool, jobs: int) -> None:
        self.root, self.lessons, self.out, self.limits, self.speed, self.jobs = root, lessons, out, limits, speed, jobs
        self.kit = Kit.read(root, lessons)
        self.options = {"lessons": [lesson.name for lesson in lessons], "speed": speed,
                        "limits": {"wall": limits.wall, "cpu": limits.cpu, "memory": limits.memory,
                                   "test_timeout": limits.test_timeout}}
        self.results: dict[str, dict] = {}  # overlay key -> a lesson's result
        self.baseline: dict[str, list[dict]] = {}  # lesson -> the tests its stub run collected
        self.skipped: dict[str, set[str]] = {}  # lesson -> the tests skipped on this machine (CUDA ones)
        self.scratch: Path | None = None

    def fingerprint(self, student: Student) -> str:
        digest = hashlib.sha256(json.dumps([SCHEMA, self.kit.digest, self.options]).encode())
        for lesson in self.lessons:
            digest.update(_key(lesson.name, self.kit.overlay(lesson.name, student.files.get(lesson.name, {}))).encode())
        digest.update(json.dumps(student.ignored).encode())
        return digest.hexdigest()

    def run(self, roster: list[Student], *, force: bool) -> int:
        from grader.grading import sandbox

        todo, unchanged = [], 0
        for student in roster:
            read_work(student, self.lessons)
            previous = _load(self.out / "students" / f"{student.name}.json")
            student.fingerprint = None if student.problem else self.fingerprint(student)
            if not force and student.fingerprint and previous and previous.get("fingerprint") == student.fingerprint:
                unchanged += 1
            else:
                todo.append(student)
        print(f"grading {len(todo)} student{'s' if len(todo) != 1 else ''} x {len(self.lessons)} lessons, "
              f"{self.jobs} at a time" + (f" ({unchanged} unchanged since the last run, skipped)" if unchanged else "")
              + f"; results in {self.out}", file=sys.stderr)
        sandbox.preload()  # first: a Ctrl-C meanwhile ends the process there, with nothing to clean up
        self.scratch = Path(tempfile.mkdtemp(prefix="kata-grade-"))
        progress = Progress(len(todo), len(todo) * len(self.lessons))
        failed = []
        try:
            self._baseline(sandbox)
            pending: dict[str, list[tuple[Student, str]]] = {}  # key -> who waits on that run
            done: dict[str, dict[str, dict]] = {s.name: {} for s in todo}

            def assign(student: Student, lesson: str, result: dict) -> None:
                done[student.name][lesson] = result
                progress.step()
                if len(done[student.name]) == len(self.lessons):
                    record = self.write_student(student, done.pop(student.name))
                    progress.student(student.name, record)

            def jobs():
                for student in todo:
                    if student.problem:
                        self.write_failed(student)
                        failed.append(student.name)
                        progress.skip(len(self.lessons))
                        progress.student(student.name, None, student.problem)
                        continue
                    for lesson in self.lessons:
                        overlay = self.kit.overlay(lesson.name, student.files.get(lesson.name, {}))
                        key = _key(lesson.name, overlay)
                        if key in self.results:
                            assign(student, lesson.name, self.results[key])
                        elif key in pending:
                            pending[key].append((student, lesson.name))
                        else:
                            pending[key] = [(student, lesson.name)]
                            yield self._job(f"{student.name}/{lesson.name}", lesson.name, overlay, key)

            def on_done(outcome) -> None:
                result = self.result(outcome)
                self.results[outcome.job.tag[1]] = result
                shutil.rmtree(outcome.job.home, ignore_errors=True)
                for student, lesson in pending.pop(outcome.job.tag[1]):
                    assign(student, lesson, result)

            sandbox.run_jobs(jobs(), parallel=self.jobs, limits=self.limits, on_done=on_done)
        finally:
            progress.close()
            shutil.rmtree(self.scratch, ignore_errors=True)
            if len(self.baseline) == len(self.lessons):  # (interrupted too: the students done so far)
                self.write_class()
        return 1 if failed else 0

    def _job(self, name: str, lesson: str, overlay: dict[str, bytes], key: str):
        from grader.grading.sandbox import Job

        home = self.scratch / f"{len(self.results):05d}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        while home.exists():
            home = home.with_name(home.name + "x")
        self.kit.write_copy(home / "kit", lesson, overlay)
        # CUDA tests stay: the harness skips them where there is no GPU, and skipped tests count
        # on neither side (the parent never touches CUDA, so a child may).
        args = [f"exercises/{lesson}", "-q", "-p", "no:cacheprovider", "--color=no",
                *([] if self.speed else ["-m", "not speed"])]
        return Job(name=name, workdir=home / "kit", args=args, home=home, tag=(lesson, key))

    def _baseline(self, sandbox) -> None:
        """Run every lesson's untouched stub: the tests each lesson has (and its result for every
        student who left it untouched). A lesson whose stub run collects nothing stops the grading."""
        outcomes = []
        jobs = [self._job(f"(stub)/{lesson.name}", lesson.name, {}, _key(lesson.name, {})) for lesson in self.lessons]
        sandbox.run_jobs(jobs, parallel=self.jobs, limits=self.limits, on_done=outcomes.append)
        for outcome in outcomes:
            lesson, key = outcome.job.tag
            if not outcome.collected or outcome.collect_errors:
                errors = "; ".join(e["message"].strip().splitlines()[-1] for e in outcome.collect_errors)
                raise KitError(f"lesson {lesson}: its tests could not be collected in a grading copy "
                               f"({errors or outcome.ended_early(self.limits) or 'no tests'}):\n{outcome.output[-2000:]}")
            passed = [t["nodeid"] for t in outcome.tests.values() if t["outcome"] == "passed"]
            if passed:  # a student who left the lesson alone would score these
                raise KitError(f"lesson {lesson}: the kit's exercises/{lesson} passes {len(passed)} test(s) "
                               f"({passed[0]}, ...): grading needs the untouched stubs there "
                               f"(`kata reset {lesson}` puts them back, keeping a backup)")
            if outcome.tampering:  # the kit's own stub: the guard is wrong, not a student
                raise KitError(f"lesson {lesson}: the tamper checks flag the untouched stub: "
                               + "; ".join(outcome.tampering))
            self.baseline[lesson] = outcome.collected
            self.skipped[lesson] = {t["nodeid"] for t in outcome.tests.values() if t["outcome"] == "skipped"}
            self.results[key] = self.result(outcome)
            shutil.rmtree(outcome.job.home, ignore_errors=True)

    def result(self, outcome) -> dict:
        """One lesson's result from what its run reported; tests it never reported did not pass."""
        lesson = outcome.job.tag[0]
        collected = outcome.collected if outcome.collected is not None else self.baseline.get(lesson, [])
        why = outcome.ended_early(self.limits)
        if rewritten := self.kit.changed(outcome.job.workdir, lesson):  # too late to matter, but meant to
            outcome.tampering.append("changed the grading copy's own files: " + ", ".join(rewritten[:5]))
        tests = []
        for test in collected:
            entry = outcome.tests.get(test["nodeid"])
            if entry is None and test["nodeid"] in self.skipped.get(lesson, ()):  # never counts, run or not
                entry = {**test, "outcome": "skipped", "speed": [], "message": "skipped on this machine"}
            elif entry is None:
                entry = {**test, "outcome": "error", "speed": [],
                         "message": f"no result: the run {why}" if why else "no result was reported"}
            if outcome.tampering:
                entry = {**entry, "outcome": "error", "message": "not graded: tampering detected ("
                         + "; ".join(outcome.tampering[:3]) + ")"}
            tests.append(entry)
        run = PytestRun(exitstatus=outcome.exitstatus if outcome.exitstatus is not None else 1, tests=tests,
                        collect_errors=outcome.collect_errors)
        status = summarize(lesson, run)
        if outcome.tampering:
            status.state, status.problem = "tampered", "tampering detected: " + "; ".join(outcome.tampering[:3])
        elif why:
            status.state, status.problem = "stopped", f"the run {why}"
            if _out_of_memory(tests):
                status.problem += f"; it ran out of memory (limit {self.limits.memory >> 20} MiB)"
        elif _out_of_memory(tests):
            status.problem = f"ran out of memory (limit {self.limits.memory >> 20} MiB)"
        elif any("File too large" in t["message"] for t in tests):  # EFBIG: Python ignores SIGXFSZ
            status.problem = (f"wrote more than {self.limits.file_size >> 20} MiB to one file (printed too much?); "
                              "the write failed")
        return {"tests": tests, "collect_errors": outcome.collect_errors, "status": status,
                "seconds": round(outcome.seconds, 2), "cpu_seconds": round(outcome.cpu_seconds, 2),
                "test_seconds": round(sum(t.get("seconds", 0.0) for t in tests), 2),
                "max_rss_mib": round(outcome.max_rss_mib, 1), "output": outcome.output}

    # --- writing ------------------------------------------------------------------------

    def write_student(self, student: Student, results: dict[str, dict]) -> dict:
        order = self.lessons
        runs = [(lesson, PytestRun(exitstatus=0, tests=results[lesson.name]["tests"])) for lesson in order]
        summaries = [results[lesson.name]["status"] for lesson in order]
        data = exercism(runs, summaries)
        for test in data["tests"]:
            if not test["public"]:
                test["test_code"] = ""  # hidden tests stay hidden, even in feedback handed back
        logs = self.out / "logs" / student.name
        for entry, lesson in zip(data["lessons"], order):
            result = results[lesson.name]
            entry.update({key: result[key] for key in ("seconds", "cpu_seconds", "test_seconds", "max_rss_mib")})
            entry["files"] = sorted(student.files.get(lesson.name, {}))
            write_text(logs / f"{lesson.name}.txt", result["output"])
        data.update({
            "student": student.name, "points": sum(s.points for s in summaries),
            "max_points": sum(s.max_points for s in summaries), "ignored": student.ignored,
            "flags": [f"{s.lesson}: {s.problem}" for s in summaries if s.state in ("tampered", "stopped")],
            "fingerprint": student.fingerprint, "kit": self.kit.digest, "options": self.options,
            "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        })
        write_json(self.out / "students" / f"{student.name}.json", data, indent=1)
        return data

    def write_failed(self, student: Student) -> None:
        write_json(self.out / "students" / f"{student.name}.json", {
            "version": 3, "status": "error", "message": student.problem, "tests": [], "lessons": [],
            "student": student.name, "points": 0.0, "max_points": self.max_points(), "ignored": student.ignored,
            "flags": [], "failed": student.problem, "fingerprint": None, "kit": self.kit.digest,
            "options": self.options, "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        })

    def max_points(self) -> float:
        return sum(t["points"] for tests in self.baseline.values() for t in tests)

    def write_class(self) -> None:
        records = [r for p in sorted((self.out / "students").glob("*.json")) if (r := _load(p))]
        write_tables(records, self.out)


def _out_of_memory(tests: list[dict]) -> bool:
    return any("MemoryError" in t["message"] or "can't allocate memory" in t["message"] for t in tests)


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- the class's tables ---------------------------------------------------------------------


def write_tables(records: list[dict], out: Path) -> None:
    """class.csv and summary.txt from the students' records; the summary is printed too."""
    lessons = sorted({entry["lesson"] for record in records for entry in record.get("lessons", [])})
    points = {r["student"]: {e["lesson"]: e["points"] for e in r.get("lessons", [])} for r in records}
    maximum = {}
    for record in records:
        for entry in record.get("lessons", []):
            maximum[entry["lesson"]] = max(maximum.get(entry["lesson"], 0.0), entry["max_points"])
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    writer.writerow(["student", *lessons, "total", "max_points", "flags"])
    for record in records:
        flags = record.get("flags", []) + ([f"failed to grade: {record['failed']}"] if record.get("failed") else [])
        writer.writerow([record["student"], *(f"{points[record['student']].get(lesson, 0.0):g}" for lesson in lessons),
                         f"{record['points']:g}", f"{record['max_points']:g}", " | ".join(flags)])
    write_text(out / "class.csv", rows.getvalue())
    summary = summary_table(records, lessons, points, maximum)
    write_text(out / "summary.txt", summary)
    print(summary, end="")


def summary_table(records: list[dict], lessons: list[str], points: dict, maximum: dict) -> str:
    width = max([7, *(len(r["student"]) for r in records)])
    total = sum(maximum.values())
    head = f"{'student':<{width}}" + "".join(f"{lesson[:2]:>6}" for lesson in lessons) + f"{'total':>8}"
    top = f"{'(max)':<{width}}" + "".join(f"{maximum[lesson]:>6g}" for lesson in lessons) + f"{total:>8g}"
    lines = [head, top]
    for record in records:
        mark = " !" if record.get("flags") or record.get("failed") else ""
        lines.append(f"{record['student']:<{width}}" + "".join(f"{points[record['student']].get(lesson, 0.0):>6g}" for lesson in lessons)
                     + f"{record['points']:>8g}{mark}")
    if records:
        means = [sum(points[r['student']].get(lesson, 0.0) for r in records) / len(records) for lesson in lessons]
        overall = sum(r["points"] for r in records) / len(records)
        lines.append(f"{'mean':<{width}}" + "".join(f"{m:>6.1f}" for m in means) + f"{overall:>8.1f}")
    problems = [f"  {r['student']}: {flag}" for r in records for flag in r.get("flags", [])]
    failed = [f"  {r['student']}: {r['failed']}" for r in records if r.get("failed")]
    text = "\n".join(lines) + "\n"
    text += f"\n{len(records)} students"
    text += f", {len({p.split(':')[0] for p in problems})} flagged (!)" if problems else ""
    text += f", {len(failed)} could not be graded" if failed else ""
    text += "\n"
    if problems:
        text += "\nflagged (look at these by hand: students/<name>.json, logs/<name>/):\n" + "\n".join(problems) + "\n"
    if failed:
        text += "\ncould not be graded:\n" + "\n".join(failed) + "\n"
    return text


def merge(folders: list[Path], out: Path) -> int:
    """Combine shards: every students/*.json of `folders` into `out`, then the class's tables."""
    chosen: dict[str, tuple[dict, Path]] = {}
    for folder in folders:
        files = sorted((folder / "students").glob("*.json"))
        if not files:
            raise KitError(f"{folder} holds no students/*.json: is it a RESULTS_DIR of kata grade?")
        for path in files:
            record = _load(path)
            if record is None:
                print(f"warning: {path} is not readable JSON; left out", file=sys.stderr)
                continue
            previous = chosen.get(record["student"])
            if previous and previous[1] != folder:
                print(f"warning: {record['student']} was graded in both {previous[1]} and {folder}; "
                      "keeping the later one", file=sys.stderr)
                if previous[0].get("graded_at", "") > record.get("graded_at", ""):
                    continue
            chosen[record["student"]] = (record, folder)
    kits = {record.get("kit") for record, _ in chosen.values()}
    if len(kits) > 1:
        print("warning: the shards were graded with different versions of the kit", file=sys.stderr)
    for name, (record, _) in chosen.items():
        write_json(out / "students" / f"{name}.json", record, indent=1)
    write_tables([chosen[name][0] for name in sorted(chosen)], out)
    return 0


# --- progress -------------------------------------------------------------------------------


class Progress:
    """A bar with an ETA on a terminal; a line per student otherwise (CI logs)."""

    def __init__(self, students: int, runs: int, stream=sys.stderr) -> None:
        self.students, self.runs, self.stream = students, runs, stream
        self.done_students = self.done_runs = self.skipped_runs = 0
        self.start = time.monotonic()
        self.tty = stream.isatty()
        self.last = 0.0

    def step(self) -> None:
        self.done_runs += 1
        self._draw()

    def skip(self, runs: int) -> None:
        self.skipped_runs += runs

    def student(self, name: str, record: dict | None, problem: str | None = None) -> None:
        self.done_students += 1
        if problem:
            self._line(f"FAILED to grade {name}: {problem}")
        elif not self.tty:
            flags = f"; {len(record['flags'])} flagged" if record["flags"] else ""
            self._line(f"[{self.done_students}/{self.students}] {name}: {record['points']:g}/{record['max_points']:g} "
                       f"points{flags} ({self._eta()})")
        self._draw(force=True)

    def _eta(self) -> str:
        work = self.runs - self.skipped_runs
        elapsed = time.monotonic() - self.start
        if not self.done_runs or not work:
            return f"{elapsed:.0f} s"
        left = elapsed / self.done_runs * max(0, work - self.done_runs)
        return f"{elapsed:.0f} s, ETA {int(left // 60)}m{int(left % 60):02d}s"

    def _draw(self, force: bool = False) -> None:
        if not self.tty or (not force and time.monotonic() - self.last < 0.25):
            return
        self.last = time.monotonic()
        fraction = self.done_runs / max(1, self.runs - self.skipped_runs)
        bar = "#" * int(30 * fraction)
        self.stream.write(f"\r[{bar:<30}] {self.done_students}/{self.students} students, {self._eta()}\x1b[K")
        self.stream.flush()

    def _line(self, text: str) -> None:
        self.stream.write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"graded {self.done_students} of {self.students} students in "
                          f"{time.monotonic() - self.start:.0f} s\n")
        self.stream.flush()
