"""This kit's feedback time against an earlier revision's, side by side.

    python benchmarks/versus.py REV [LESSON ...] [--runs 5]
    python benchmarks/versus.py REV --status [LESSON] [--runs 5]

Checks REV out into a temporary git worktree and runs, for each lesson, ``python -m pytest
exercises/NN`` (the stubs) and ``python -m pytest solutions/NN`` (the answers) in both
checkouts, interleaved round by round (REV, this kit, REV, ...), each a fresh process with
PYTHONPATH set to its checkout so that each runs its own grader. Prints each command's minimum
over the rounds and the ratio this kit / REV: above 1.0 is slower. Both run on the same
machine at the same moments, so the load of a shared machine falls on both alike. The CPU
seconds (user and system, of the run's whole process tree) beside them move less with the
load than the wall clock does.

With --status, the commands are ``kata status``'s, on the stubs: ``python -m grader status
--no-cache`` (every lesson runs), then ``python -m grader status`` after one line was added to
one file of LESSON's exercises (default: the first lesson), a different line each round, so
that it runs that lesson and the cache answers the rest. The exercises are put back after.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.lessons import KitError, chosen_lessons  # noqa: E402 (after the kit's root is on sys.path)


def timed(checkout: Path, args: list[str], expected: int, program: str = "pytest") -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh ``python -m PROGRAM ARGS`` in `checkout`."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    extra = ["-q", "-p", "no:cacheprovider"] if program == "pytest" else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", program, *args, *extra],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != expected:
        sys.exit(f"versus: `{program} {' '.join(args)}` in {checkout} exited {proc.returncode}, not {expected}")
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def status_side_by_side(old: Path, rev: str, lesson: str, runs: int) -> None:
    """``kata status`` cold, then after one file of `lesson` changed, in both checkouts."""
    print(f"{'kata status':<26} {rev[:10]:>10} {'this kit':>10}  ratio   {'CPU then':>9} {'CPU now':>9}  ratio")
    edited = {
        checkout: min(p for p in (checkout / "exercises" / lesson).glob("*.py") if p.name != "__init__.py")
        for checkout in (old, ROOT)
    }
    texts = {checkout: path.read_bytes() for checkout, path in edited.items()}
    try:
        for case in ("--no-cache, cold", f"{lesson} changed"):
            times: dict[Path, list[tuple[float, float]]] = {old: [], ROOT: []}
            for number in range(runs):
                for checkout in (old, ROOT):
                    if case.startswith("--no-cache"):
                        times[checkout].append(timed(checkout, ["status", "--no-cache"], 0, program="grader"))
                        continue
                    if number == 0:
                        timed(checkout, ["status"], 0, program="grader")  # the cache, filled
                    edited[checkout].write_bytes(texts[checkout] + f"\n# changed {number}\n".encode())
                    times[checkout].append(timed(checkout, ["status"], 0, program="grader"))
            (before, cpu_before), (after, cpu_after) = (
                (min(w for w, _ in times[c]), min(c_ for _, c_ in times[c])) for c in (old, ROOT)
            )
            print(
                f"{case:<26} {before:>8.2f} s {after:>8.2f} s  {after / before:.2f}x  "
                f"{cpu_before:>7.2f} s {cpu_after:>7.2f} s  {cpu_after / cpu_before:.2f}x",
                flush=True,
            )
        print(f"(minimum of {runs} interleaved runs each)")
    finally:
        for checkout, path in edited.items():
            path.write_bytes(texts[checkout])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("lessons", nargs="*", help="lesson names or numbers (default: all)")
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument(
        "--status",
        action="store_true",
        help="time `kata status` (cold, and after LESSON changed) instead of each lesson's pytest runs",
    )
    args = parser.parse_intermixed_args()
    try:
        lessons = chosen_lessons(ROOT, args.lessons)
    except KitError as exc:
        parser.error(str(exc))
    if args.status and len(args.lessons) > 1:
        parser.error("--status takes one LESSON: the one whose file is changed")
    with tempfile.TemporaryDirectory(prefix="kata-versus-") as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), args.rev], cwd=ROOT, check=True)
        try:
            if args.status:
                status_side_by_side(old, args.rev, lessons[0].name, args.runs)
                return 0
            print(
                f"{'lesson':<18} {'tree':<10} {args.rev[:10]:>10} {'this kit':>10}  ratio   "
                f"{'CPU then':>9} {'CPU now':>9}  ratio"
            )
            ratios = []
            for lesson in lessons:
                for tree, expected in (("exercises", 1), ("solutions", 0)):
                    command = [f"{tree}/{lesson.name}"]
                    times: dict[Path, list[tuple[float, float]]] = {old: [], ROOT: []}
                    for _ in range(args.runs):
                        for checkout in (old, ROOT):
                            times[checkout].append(timed(checkout, command, expected))
                    (before, cpu_before), (after, cpu_after) = (
                        (min(w for w, _ in times[c]), min(c_ for _, c_ in times[c])) for c in (old, ROOT)
                    )
                    ratios.append(after / before)
                    print(
                        f"{lesson.name:<18} {tree:<10} {before:>8.2f} s {after:>8.2f} s  {after / before:.2f}x  "
                        f"{cpu_before:>7.2f} s {cpu_after:>7.2f} s  {cpu_after / cpu_before:.2f}x",
                        flush=True,
                    )
            print(
                f"ratio this kit / {args.rev}: {min(ratios):.2f}x to {max(ratios):.2f}x "
                f"(minimum of {args.runs} interleaved runs each)"
            )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
