"""This kit's feedback time against an earlier revision's, side by side.

    python benchmarks/versus.py REV [LESSON ...] [--runs 5]

Checks REV out into a temporary git worktree and runs, for each lesson, ``python -m pytest
exercises/NN`` (the stubs) and ``python -m pytest solutions/NN`` (the answers) in both
checkouts, interleaved round by round (REV, this kit, REV, ...), each a fresh process with
PYTHONPATH set to its checkout so that each runs its own grader. Prints each command's minimum
over the rounds and the ratio this kit / REV: above 1.0 is slower. Both run on the same
machine at the same moments, so the load of a shared machine falls on both alike. The CPU
seconds (user and system, of the run's whole process tree) beside them move less with the
load than the wall clock does.
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

from grader.lessons import KitError, chosen_lessons  # noqa: E402


def timed(checkout: Path, args: list[str], expected: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh run."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider"], cwd=checkout,
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != expected:
        sys.exit(f"versus: `pytest {' '.join(args)}` in {checkout} exited {proc.returncode}, not {expected}")
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("lessons", nargs="*", help="lesson names or numbers (default: all)")
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args()
    try:
        lessons = chosen_lessons(ROOT, args.lessons)
    except KitError as exc:
        parser.error(str(exc))
    with tempfile.TemporaryDirectory(prefix="kata-versus-") as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), args.rev], cwd=ROOT, check=True)
        try:
            print(f"{'lesson':<18} {'tree':<10} {args.rev[:10]:>10} {'this kit':>10}  ratio   "
                  f"{'CPU then':>9} {'CPU now':>9}  ratio")
            ratios = []
            for lesson in lessons:
                for tree, expected in (("exercises", 1), ("solutions", 0)):
                    command = [f"{tree}/{lesson.name}"]
                    times: dict[Path, list[tuple[float, float]]] = {old: [], ROOT: []}
                    for _ in range(args.runs):
                        for checkout in (old, ROOT):
                            times[checkout].append(timed(checkout, command, expected))
                    (before, cpu_before), (after, cpu_after) = (
                        (min(w for w, _ in times[c]), min(c_ for _, c_ in times[c])) for c in (old, ROOT))
                    ratios.append(after / before)
                    print(f"{lesson.name:<18} {tree:<10} {before:>8.2f} s {after:>8.2f} s  {after / before:.2f}x  "
                          f"{cpu_before:>7.2f} s {cpu_after:>7.2f} s  {cpu_after / cpu_before:.2f}x", flush=True)
            print(f"ratio this kit / {args.rev}: {min(ratios):.2f}x to {max(ratios):.2f}x "
                  f"(minimum of {args.runs} interleaved runs each)")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
