"""How long a learner waits for feedback, as a multiple of `import torch`.

    python benchmarks/feedback.py [LESSON ...] [--runs 5] [--no-suite] [--check]

Times, in fresh processes, interleaved round by round so that every command sees the same
load: ``python -c "import torch"`` (the floor of any feedback), then for every lesson
``python -m pytest exercises/NN`` as a learner runs it with the stubs untouched and with the
answers in (``solutions/NN``, the same tests), and prints the median of ``--runs`` runs of
each and its ratio to ``import torch``. Then, once, the whole reference suite in one pytest
process (``python -m pytest solutions``).

Targets, because a learner should wait little more than the `import torch` every run pays
anyway: a lesson at most 2x ``import torch`` (4x for a lesson whose tests start
DataLoader worker processes); the whole suite in 60 s on 2 cores. ``--check`` exits 1 when a
target is missed.

A lesson's run also pays for the torch modules that torch itself imports lazily on first use
(the first optimizer imports torch._dynamo, gradcheck the symbolic-shapes module and sympy):
the lesson's subject, which a learner's own script pays too. So each run is also set against
its own floor, ``import torch`` plus those modules (found in a ``-X importtime`` run of the
same command): that ratio is what the kit itself adds. It is informational; the targets above
are unchanged.

Every run must end as it should (the stubs with pytest's exit 1, the answers
and the suite with 0); one that does not stops the benchmark with exit 2, naming it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.lessons import KitError, Lesson, chosen_lessons  # noqa: E402 (after the kit's root is on sys.path)

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
TARGET, WORKER_TARGET, SUITE_TARGET = 2.0, 4.0, 60.0


class WrongExit(Exception):
    """A timed command ended with another exit status than the one its run must have."""


def wall(command: list[str], expect: int = 0) -> float:
    """Seconds `command` takes, run from the kit's root; its output is discarded.

    A run that ends with another exit status than `expect` raises WrongExit: a lesson whose
    tests crashed at collection would otherwise count as fast feedback.
    """
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode != expect:
        raise WrongExit(f"`python {' '.join(command[1:])}` exited {done.returncode}, not {expect}; run it to see why")
    return seconds


LAZY_MIN_SECONDS = 0.01  # smaller lazy imports are noise


def lazy_torch_imports(command: list[str]) -> tuple[str, ...]:
    """The torch modules `command` (a pytest run) imports after ``import torch``, slowest first.

    From ``-X importtime`` with capture off: a module at the top of its import chain (no
    indentation) named torch.* was imported on its own, after torch, by torch's lazy imports.
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command[1:], "-s"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found = {}
    for line in done.stderr.splitlines():  # "import time: self [us] | cumulative | name"
        match = re.fullmatch(r"import time:\s+\d+ \|\s+(\d+) \| (torch\.\S+)", line)
        if match and int(match[1]) >= LAZY_MIN_SECONDS * 1e6:
            found[match[2]] = max(found.get(match[2], 0), int(match[1]))
    return tuple(sorted(found, key=found.get, reverse=True))


def starts_workers(lesson: Lesson) -> bool:
    """True when the lesson's tests start DataLoader worker processes (they get 4x)."""
    return any("num_workers" in test.read_text(encoding="utf-8") for test in lesson.tests_dir.glob("test_*.py"))


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch

    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, torch {torch.__version__}, "
        f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons by number, topic or folder name (default: every lesson)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (default 5); the median counts")
    parser.add_argument("--no-suite", action="store_true", help="skip the whole-suite run")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    try:  # "07", "7", "stable" or "07_stable"; an unknown name is an error, not an empty table
        lessons = chosen_lessons(ROOT, args.lessons)
    except KitError as error:
        parser.error(str(error))
    print(machine())
    print(f"median of {args.runs} runs, commands interleaved round by round\n")

    # The exit status each run must have: the stubs leave TODOs (pytest exit 1), the answers pass.
    commands = {("import torch", ""): ([sys.executable, "-c", "import torch"], 0)}
    for lesson in lessons:
        for tree, expect in (("exercises", 1), ("solutions", 0)):
            commands[(lesson.name, tree)] = ([*PYTEST, f"{tree}/{lesson.name}"], expect)
    lazy = {key: lazy_torch_imports(command) for key, (command, _) in commands.items() if key[1]}
    floors = {
        modules: ([sys.executable, "-c", f"import torch, {', '.join(modules)}"], 0)
        for modules in sorted(set(lazy.values()))
        if modules
    }
    commands.update({("floor", modules): command for modules, command in floors.items()})
    times: dict[tuple, list[float]] = {key: [] for key in commands}
    try:
        for _ in range(args.runs):
            for key, (command, expect) in commands.items():
                times[key].append(wall(command, expect))
    except WrongExit as exc:
        print(f"feedback: {exc}", file=sys.stderr)
        return 2
    median = {key: statistics.median(values) for key, values in times.items()}
    floor = median[("import torch", "")]

    missed = []
    print(f"{'import torch':20} {floor:6.2f} s")
    print(f"{'lesson':20} {'stubs':>8} {'ratio':>6} {'answers':>9} {'ratio':>6}  target")
    for lesson in lessons:
        target = WORKER_TARGET if starts_workers(lesson) else TARGET
        stubs, answers = median[(lesson.name, "exercises")], median[(lesson.name, "solutions")]
        flags = [tree for tree, seconds in (("stubs", stubs), ("answers", answers)) if seconds / floor > target]
        missed += [f"{lesson.name} {tree}" for tree in flags]
        print(
            f"{lesson.name:20} {stubs:6.2f} s {stubs / floor:5.2f}x {answers:7.2f} s {answers / floor:5.2f}x  "
            f"<= {target:g}x{'  MISSED: ' + ', '.join(flags) if flags else ''}"
        )

    print("\nagainst each run's own floor, import torch and the torch modules the run imports lazily:")
    print(f"{'lesson':20} {'tree':6} {'run':>8} {'floor':>8} {'ratio':>6}  lazily imported")
    for lesson in lessons:
        for tree, label in (("exercises", "stubs"), ("solutions", "answers")):
            key, modules = (lesson.name, tree), lazy[(lesson.name, tree)]
            own = median[("floor", modules)] if modules else floor
            print(
                f"{lesson.name:20} {label:7} {median[key]:6.2f} s {own:6.2f} s {median[key] / own:5.2f}x  "
                f"{', '.join(modules) or '-'}"
            )

    if not args.no_suite:
        try:
            suite = wall([*PYTEST, "solutions"])
        except WrongExit as exc:
            print(f"feedback: {exc}", file=sys.stderr)
            return 2
        over = suite > SUITE_TARGET
        missed += ["whole suite"] if over else []
        print(
            f"\nwhole reference suite (python -m pytest solutions, one process): {suite:.1f} s "
            f"(target <= {SUITE_TARGET:g} s){'  MISSED' if over else ''}"
        )
    if missed:
        print(f"\nmissed: {', '.join(missed)}")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
