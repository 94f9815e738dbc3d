"""``kata watch [LESSON]``: re-run a lesson's tests every time a file of it is saved.

The contract:

- The tests run as ``python -m pytest exercises/NN_topic -q -p no:cacheprovider`` in the kit
  root, in a child process whose output goes straight to the terminal (the plugin prints the
  TODO and "Next:" lines itself). After each run one line says what is being watched.
- Every ``--interval`` seconds, during a run too, the watcher takes a snapshot (path,
  mtime_ns, size) of every ``*.py`` under ``exercises/NN_topic/``. A change counts as a save
  once the snapshot has stayed the same for one more interval (editors save in several steps).
  A save runs the tests again; a save during a run stops it there and then, prints
  "(run stopped: a file was saved)" and starts the next run. A save that the run's end
  overtook is compared against the snapshot taken before the run, so it still triggers one
  more run.
- Nothing the learner writes stops the watcher: a file that does not parse is reported by the
  plugin (BROKEN) and the watcher waits for the next save.
- The tests run in a process group of their own (forked: a session of their own; fresh: a
  subprocess started in a new session, or a new process group on Windows). Every stop of a
  run, whatever asked for it, signals the whole group (SIGTERM, then SIGKILL after
  STOP_GRACE_S), waits for the tests' process, then kills what is left of the group: nothing
  is left running, DataLoader workers included.
- Ctrl-C (or SIGTERM, or the terminal closing) stops the running tests, prints "stopped
  watching" and exits 0, without a traceback. Only the watcher gets the terminal's Ctrl-C (the
  tests are in their own group), so the child never prints a traceback of its own for an
  interrupt that lands while it is still starting up.
- When every test passes, the run says so (grader.plugin.summary) and, on a terminal, the watcher
  offers the key that moves on to the next lesson. On a terminal, keys act at
  once, during a run too (no Enter): ``r`` runs the tests again, ``n`` moves on to the next
  lesson (a run they stop ends with "(run stopped: r pressed)", or "(run stopped: n pressed,
  on to NN_topic)"), ``q`` quits (stopping a run, then "stopped watching"), ``h`` shows the
  lesson's next hint level. An ``h`` pressed during a run, and an ``n`` on the last lesson,
  wait for the run's end: their text would land inside the run's output. Off a terminal, no
  keys are read; saves still stop a run.
- ``--once`` runs the tests once and exits with pytest's status, for scripts.
- Later runs start warm. After the first run (a fresh process), while the learner reads its
  result, the watcher imports what runs need once (torch, the torch modules it imports lazily
  for optimizers and gradcheck, pytest, hypothesis) and then forks every run from itself:
  the same command line and output, without paying for ``import torch`` again (the figures are
  in docs/PERFORMANCE.md). A run is checked for its end every END_POLL_S (its output reaches
  the terminal at once: the check only readies the watcher for the next save). The learner's
  modules are never imported in the watcher, so each run sees the files as saved. Where
  os.fork is missing (Windows), or the imports fail, every run is a fresh process.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from pathlib import Path

from grader import signals
from grader.learner.keys import Keys
from grader.learner.lesson_runs import Forked, Warm, run_tests, start_tests, stop_tests
from grader.lessons import KitError, Lesson, all_lessons, get_lesson

CLEAR_SCREEN = "\033[2J\033[H"
END_POLL_S = 0.05  # how often a run is checked for its end (its output is the learner's at once)

Snapshot = frozenset  # of (path, mtime_ns, size), one per *.py file


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "lesson",
        metavar="LESSON",
        nargs="?",
        help="lesson name or number, e.g. 03_broadcast, 03 or broadcast "
        "(default: the one `kata next` picks: in progress, else the first not started)",
    )
    parser.add_argument(
        "--interval",
        type=_positive_seconds,
        default=0.5,
        metavar="SECONDS",
        help="how often to look for saved files (default: 0.5)",
    )
    parser.add_argument("--once", action="store_true", help="run the tests once and exit with pytest's status")
    parser.epilog = (parser.epilog or "examples:") + (
        "\n  kata watch 07 --interval 2  look for saves every 2 s (a slow network drive)"
        "\n  kata watch 07 --once        run once, exit 0 when every test passes (for scripts)"
    )


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, e.g. 0.5; got {text!r}")
    return seconds


def run(args: argparse.Namespace, root: Path) -> int:
    lesson = pick_lesson(root, args.lesson)
    folder = lesson.dir("exercises")
    if not folder.is_dir():
        raise KitError(
            f"lesson {lesson.name} has no folder exercises/{lesson.name}/ to watch; "
            f"`kata reset {lesson.name}` puts the untouched stubs back"
        )
    with _stop_on_termination():
        if args.once:
            return run_tests(root, lesson)
        return watch(root, lesson, args.interval)


def pick_lesson(root: Path, name: str | None) -> Lesson:
    """The lesson named, or the one `kata next` picks (in progress, else the first not started)."""
    if name is not None:
        return get_lesson(root, name)
    from grader.learner.next import choose

    lesson = choose(root)
    if lesson is not None:
        return lesson
    names = [lesson.name for lesson in all_lessons(root)]
    if not names:
        raise KitError(f"no lessons in {root / 'exercises'}: there is nothing to watch")
    raise KitError(
        f"every lesson passes its tests; name the lesson to watch, e.g. `kata watch {names[0]}`. "
        f"The lessons are: {', '.join(names)}"
    )


# --- the loop ---------------------------------------------------------------------------------


def watch(root: Path, lesson: Lesson, interval: float, keys: Keys | None = None) -> int:
    """Run the tests, then again after every save, until Ctrl-C or ``q``; returns 0."""
    keys = keys or Keys.of_terminal()
    warm: Warm | None = None
    hint_level = 0
    held: list[str] = []  # keys pressed during a run that wait for its end
    try:
        while True:
            folder = lesson.dir("exercises")
            before = snapshot(folder)
            after = next_lesson(root, lesson)
            child = start_tests(root, lesson, warm)
            try:
                event = follow(child, folder, before, interval, keys, ("r", "q", "n") if after else ("r", "q"), held)
            finally:
                stop_tests(child)
            stopped = event is not None  # by a save or a key, not ended by itself
            if not stopped:
                if child.returncode == 0 and keys.live:  # the run itself said that every test passes
                    offer = f"press n for {after.name}" if after else "that was the last lesson"
                    print(f"\nWell done: {offer}.", flush=True)
                print(f"\nwatching exercises/{lesson.name}/ for changes (Ctrl-C to stop)", flush=True)
                if keys.live:
                    print("keys: h next hint, n next lesson, r run again, q quit", flush=True)
                if warm is None:
                    # A stop now ends the watcher at once: the tests are not running, and an
                    # interrupt raised inside torch's import would abort it.
                    with signals.ending_at_once(_say_stopped, 0, ("SIGINT", "SIGTERM", "SIGHUP")):
                        warm = Warm.start()  # a save meanwhile is seen at the next poll
                while True:
                    event = held.pop(0) if held else wait_for_change(folder, before, interval, keys)
                    if event == "h":
                        hint_level = _show_hint(lesson, hint_level + 1)
                        continue
                    if event == "n" and after is None:
                        print("That was the last lesson; q quits.", flush=True)
                        continue
                    break
            if event == "q":
                _say_stopped()
                return 0
            why = f"(run stopped: {STOPPED_BY[event].format(after=after)})" if stopped else ""
            if event == "n":
                lesson, hint_level, held = after, 0, []
            if sys.stdout.isatty():
                print(CLEAR_SCREEN, end="", flush=True)
            elif why:
                why = f"\n{why}"  # the stopped run may have left a line half printed
            if why:
                print(why, flush=True)
    except KeyboardInterrupt:
        _say_stopped()
        return 0
    finally:
        keys.close()


# The line before the next run, by what stopped the last one.
STOPPED_BY = {"saved": "a file was saved", "r": "r pressed", "n": "n pressed, on to {after.name}"}


def follow(
    child: subprocess.Popen | Forked,
    folder: Path,
    seen: Snapshot,
    interval: float,
    keys: Keys,
    acting: tuple[str, ...],
    held: list[str],
) -> str | None:
    """Watch the files and the keys while the tests run: None once they end by themselves, or
    the event that is to stop them, as soon as it happens: a save that has settled ("saved", as
    wait_for_change sees one) or a key of `acting`. Other keys the watcher acts on are added
    to `held`, for after the run (a hint printed now would land inside the tests' output)."""
    last, look_at = seen, time.monotonic() + interval
    while child.poll() is None:
        key = keys.read(min(END_POLL_S, max(look_at - time.monotonic(), 0.0)))
        if key in acting:
            return key
        if key in ("h", "n"):
            held.append(key)
        if time.monotonic() >= look_at:
            now = snapshot(folder)
            if now == last and now != seen:
                return "saved"
            last, look_at = now, time.monotonic() + interval
    return None


def next_lesson(root: Path, lesson: Lesson) -> Lesson | None:
    """The lesson after `lesson`, in the kit's order, or None after the last."""
    names = [other.name for other in all_lessons(root)]
    later = names[names.index(lesson.name) + 1 :] if lesson.name in names else []
    return get_lesson(root, later[0]) if later else None


def _show_hint(lesson: Lesson, level: int) -> int:
    """Show hint `level` (the last one past the end); the level shown."""
    from grader.learner.hint import show_hint

    print()
    try:
        return show_hint(lesson, level, quiet=True)
    except KitError as exc:
        print(exc, flush=True)
        return level - 1


def _say_stopped() -> None:
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        print("\nstopped watching", flush=True)


def snapshot(folder: Path) -> Snapshot:
    """(path, mtime_ns, size) of every *.py under `folder`; a file that vanishes meanwhile is left out."""
    entries = set()
    for path in folder.rglob("*.py"):
        try:
            stat = path.stat()
        except OSError:  # an editor's temporary file, deleted between listing and stat
            continue
        entries.add((str(path), stat.st_mtime_ns, stat.st_size))
    return Snapshot(entries)


def wait_for_change(folder: Path, seen: Snapshot, interval: float, keys: Keys | None = None) -> str:
    """Poll until the files differ from `seen` and then stay the same for one more interval
    ("saved"), or a key the watcher acts on is pressed ("h", "n", "r", "q")."""
    last = seen
    while True:
        key = keys.read(interval) if keys else time.sleep(interval)
        if key in ("h", "n", "r", "q"):
            return key
        now = snapshot(folder)
        if now == last and now != seen:
            return "saved"
        last = now


def _stop_on_termination():
    """SIGTERM and SIGHUP (the terminal closed) stop the watcher as Ctrl-C does, so that the
    tests it runs, which are in a process group of their own, are stopped too."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    return signals.signals_handled(interrupt, ("SIGTERM", "SIGHUP"))
