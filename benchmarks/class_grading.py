"""How long `kata grade` takes for a class: a synthetic class built from the kit, graded for real.

    python benchmarks/class_grading.py                      100 students, every lesson, all cores
    python benchmarks/class_grading.py --students 20 --jobs 2 --no-speed
    python benchmarks/class_grading.py --students 8 --jobs 1 --no-speed --versus-trusted 3
    python benchmarks/class_grading.py --in-process         the same class, graded with --in-process

Student i is, by i % 4: correct (every lesson the reference), partial (even lessons the reference,
odd ones the untouched stub), untouched (the stubs as handed out) or broken (every lesson the
reference with a syntax error at its end). Every correct, partial or broken file carries a
comment with the student's number, so no two students hand in the same bytes and the grader's
reuse of identical submissions only helps where a real class gets it too: untouched stubs.

Prints the wall time, seconds per student, and the overhead beyond the tests: of the time the
lesson runs took (forked child start to end), how much was not spent inside tests (pytest's
collection, fixtures' setup outside tests, reporting), plus the parent's fixed cost.

--versus-trusted R grades the same class 2R times instead, alternately behind the namespaces
and with --trusted (no OS boundary), and prints the minimum wall time of each and their ratio:
what the boundary costs, measured side by side. --versus-in-process R does the same with
--in-process (the tests' checks in the student's process, not in one of their own): what
keeping the checks apart saves (the ratio in-process / default).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("correct", "partial", "untouched", "broken")
OTHERS = ("trusted", "in-process")  # --versus-OTHER: the default against `kata grade --OTHER`


def build_class(folder: Path, students: int) -> None:
    lessons = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir() and p.name[:2].isdigit())
    for i in range(students):
        kind = KINDS[i % len(KINDS)]
        for n, lesson in enumerate(lessons):
            target = folder / f"s{i:03d}_{kind}" / "exercises" / lesson
            target.mkdir(parents=True)
            answer = kind == "correct" or kind == "broken" or (kind == "partial" and n % 2 == 0)
            for source in sorted((ROOT / ("solutions" if answer else "exercises") / lesson).glob("*.py")):
                text = source.read_text(encoding="utf-8")
                if answer:
                    text += f"\n# student {i}\n"
                if kind == "broken":
                    text += "def broken(:\n"
                (target / source.name).write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--keep", type=Path, help="build and grade the class here, and keep it")
    parser.add_argument(
        "--in-process", action="store_true", help="grade with --in-process (the tests' checks in the student's process)"
    )
    for other in OTHERS:
        parser.add_argument(
            f"--versus-{other}",
            type=int,
            metavar="R",
            help=f"grade R times as by default and R times with --{other}, alternately",
        )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="kata-bench-"))
    try:
        build_class(folder / "class", args.students)
        for other in OTHERS:
            rounds = getattr(args, f"versus_{other.replace('-', '_')}")
            if rounds:
                versus(folder, args, other, rounds)
                return 0
        wall = grade(folder, folder / "results", args, ["--in-process"] if args.in_process else [])
        report(folder, wall, args)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def versus(folder: Path, args: argparse.Namespace, other: str, rounds: int) -> None:
    """Grade the class `rounds` times as by default and as many with --`other`, alternately;
    print the minimum wall time of each and their ratio."""
    walls: dict[str, list[float]] = {"default": [], other: []}
    for round_ in range(rounds):
        for mode in walls:
            out = folder / f"results-{mode}-{round_}"
            walls[mode].append(grade(folder, out, args, [f"--{other}"] if mode == other else []))
    best = {mode: min(w) for mode, w in walls.items()}
    print(
        f"class: {args.students} students x 10 lessons, --jobs {args.jobs}, "
        f"{'no speed tests' if args.no_speed else 'speed tests included'}, {rounds} rounds"
    )
    for mode, w in walls.items():
        print(f"{mode}: min {best[mode]:.1f} s ({', '.join(f'{x:.1f}' for x in w)})")
    print(f"{other} / default: {best[other] / best['default']:.3f}")
    # The wall time holds fixed costs (the stubs' runs, and the default's trial of the kit's answers);
    # each lesson's run of the first correct student, its least over the rounds, holds none.
    runs = {mode: lesson_seconds(folder, mode, rounds) for mode in walls}
    print(f"a correct student's lesson runs, least of {rounds} each (s): lesson, default, {other}, ratio")
    for lesson in sorted(runs["default"]):
        print(
            f"  {lesson} {runs['default'][lesson]:.2f} {runs[other][lesson]:.2f} "
            f"{runs[other][lesson] / runs['default'][lesson]:.2f}"
        )
    total = {mode: sum(seconds.values()) for mode, seconds in runs.items()}
    print(f"  all {total['default']:.2f} {total[other]:.2f} {total[other] / total['default']:.2f}")


def lesson_seconds(folder: Path, mode: str, rounds: int) -> dict[str, float]:
    """The seconds each lesson's run of student 0 (correct) took, the least over the rounds."""
    best: dict[str, float] = {}
    for round_ in range(rounds):
        record = json.loads((folder / f"results-{mode}-{round_}" / "students" / f"s000_{KINDS[0]}.json").read_text())
        for entry in record["lessons"]:
            best[entry["lesson"]] = min(best.get(entry["lesson"], float("inf")), entry["seconds"])
    return best


def grade(folder: Path, out: Path, args: argparse.Namespace, extra: list[str]) -> float:
    """Grade the class into `out`; the wall time in seconds. Exits on a failed grading."""
    command = [
        sys.executable,
        "-m",
        "grader",
        "--root",
        str(ROOT),
        "grade",
        str(folder / "class"),
        "--out",
        str(out),
        "--jobs",
        str(args.jobs),
        *(["--no-speed"] if args.no_speed else []),
        *extra,
    ]
    print("+", " ".join(command), file=sys.stderr)
    start = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        sys.exit(1)
    return wall


def report(folder: Path, wall: float, args: argparse.Namespace) -> None:
    runs: dict[str, dict] = {}  # one entry per distinct submission of a lesson: the grader ran each once
    points = {kind: [] for kind in KINDS}
    for path in sorted((folder / "results" / "students").glob("*.json")):
        record = json.loads(path.read_text())
        points[record["student"].split("_", 1)[1]].append(record["points"] / record["max_points"])
        for entry in record["lessons"]:
            files = folder / "class" / record["student"] / "exercises" / entry["lesson"]
            key = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(files.glob("*.py")))).hexdigest()
            runs.setdefault(f"{entry['lesson']}:{key}", entry)
    in_runs = sum(r["seconds"] for r in runs.values())
    in_tests = sum(r["test_seconds"] for r in runs.values())
    fixed = wall - in_runs / args.jobs
    print(
        f"class: {args.students} students x 10 lessons ({', '.join(KINDS)} in turn), "
        f"{'no speed tests' if args.no_speed else 'speed tests included'}, --jobs {args.jobs}, {os.cpu_count()} cores"
        + (", --in-process" if args.in_process else "")
    )
    print(f"wall time: {wall:.0f} s = {wall / args.students:.2f} s per student")
    print(f"lesson runs: {len(runs)} distinct submissions of {args.students * 10} (identical ones run once)")
    print(
        f"time in runs: {in_runs:.0f} s, of which {in_tests:.0f} s inside tests; overhead beyond the tests "
        f"{(in_runs - in_tests) / len(runs):.2f} s per run ({100 * (in_runs - in_tests) / in_runs:.0f}%)"
    )
    print(f"fixed cost (preload, the stubs' runs, writing results), wall minus runs/jobs: {fixed:.0f} s")
    print("mean score: " + ", ".join(f"{kind} {100 * sum(v) / max(1, len(v)):.0f}%" for kind, v in points.items()))


if __name__ == "__main__":
    sys.exit(main())
