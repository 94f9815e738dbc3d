"""How long a learner waits for feedback under ``kata watch``, once it has warmed up.

    python benchmarks/watch.py [LESSON ...] [--runs 5]

``kata watch`` runs a lesson's tests in a fresh process the first time, then imports what
runs need once (grader.learner.lesson_runs.Warm) and forks every later run from itself. This
script does the same: it warms up once (timed), then for every lesson forks ``pytest exercises/NN``
with the stubs untouched and ``pytest solutions/NN`` (the answers), interleaved round by
round with a fresh ``python -c "import torch"``, and prints the median of ``--runs`` runs of
each and its ratio to ``import torch`` (the unit of every feedback target, since every fresh
run pays it; a fresh run's figures are benchmarks/feedback.py's). Every run must end as it
should (stubs 1, answers 0), or the script stops with exit 2. It prints the machine's load
average before and after: on a busy machine the seconds grow, the ratios much less.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from feedback import WrongExit, machine, wall  # noqa: E402 (after the kit's root is on sys.path)

from grader.lessons import KitError, Lesson, chosen_lessons  # noqa: E402 (after the kit's root is on sys.path)
from grader.learner.lesson_runs import Warm, lesson_args  # noqa: E402 (after the kit's root is on sys.path)


@contextlib.contextmanager
def quiet():
    """Our stdout and stderr to /dev/null, for the children forked meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def forked(warm: Warm, tree: str, lesson: Lesson, expect: int) -> float:
    """Seconds one forked run takes, as ``kata watch`` starts it."""
    start = time.perf_counter()
    with quiet():
        code = warm.fork(ROOT, lesson_args(lesson, tree)).wait()
    seconds = time.perf_counter() - start
    if code != expect:
        raise WrongExit(f"the forked `pytest {tree}/{lesson.name}` exited {code}, not {expect}; run it to see why")
    return seconds


def load() -> str:
    """The 1-minute load average, or "unknown" where the system has none (Windows)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons by number, topic or folder name (default: every lesson)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5); the median counts")
    args = parser.parse_args(argv)
    try:
        lessons = chosen_lessons(ROOT, args.lessons)
    except KitError as error:
        parser.error(str(error))
    if not hasattr(os, "fork"):
        parser.error("this system cannot fork: kata watch runs every run in a fresh process here")
    start = time.perf_counter()
    warm = Warm.start()  # first: it times the imports (machine() imports torch)
    warm_up = time.perf_counter() - start
    if not warm.ready:
        parser.error('the warm-up failed: `python -c "from grader import forking; forking.preload(False)"` shows why')
    print(machine())
    before = load()
    print(f"median of {args.runs} runs, commands interleaved round by round\n")
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(args.runs):
            times.setdefault(("import torch", ""), []).append(wall([sys.executable, "-c", "import torch"]))
            for lesson in lessons:
                for tree, expect in (("exercises", 1), ("solutions", 0)):
                    times.setdefault((lesson.name, tree), []).append(forked(warm, tree, lesson, expect))
    except WrongExit as error:
        print(f"benchmark stopped: {error}", file=sys.stderr)
        return 2
    median = {key: statistics.median(values) for key, values in times.items()}
    floor = median[("import torch", "")]
    print(f"import torch (fresh)   {floor:5.2f} s")
    print(f"warm-up, once          {warm_up:5.2f} s  (after the first run, while its result is read)")
    print(f"load average           {before} before, {load()} after (1 min, {os.cpu_count()} cores)\n")
    print(f"{'lesson':20}  {'stubs':>7}  ratio  {'answers':>8}  ratio")
    for lesson in lessons:
        stubs, answers = median[(lesson.name, "exercises")], median[(lesson.name, "solutions")]
        print(f"{lesson.name:20} {stubs:6.2f} s  {stubs / floor:4.2f}x  {answers:6.2f} s  {answers / floor:4.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
