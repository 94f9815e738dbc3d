"""What a run's processes take on before any code of the run: the boundary, limits, an environment.

A process that runs the student's code (a code process, or the student's own process) goes
behind the boundary (`enter_boundary`): the run's cgroup, its namespaces (grader.grading.
isolation), its one CPU, and its resource limits. A tests' process stays outside and takes only
the limits (`set_limits`). Every process that runs pytest or the code gets the same plain
environment (`clean_environment`).
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

from grader.grading import cgroup, seccomp
from grader.grading.isolation import Unavailable, View, enter
from grader.grading.job import Job, Limits


def enter_boundary(job: Job, limits: Limits, view: View | None = None) -> bool:
    """Enter the run's namespaces (unless --trusted), seeing `view` (the job's, by default),
    and take its limits; False, said on the log, when the namespaces could not be made."""
    view = view or job.view
    if view is not None:
        try:  # (before the namespaces: a process in a user namespace of its own can no longer move itself)
            cgroup.enter(limits.cgroup)
        except OSError as error:
            print(f"kata grade: the run's cgroup could not be entered: {error}", file=sys.stderr, flush=True)
            return False
        try:
            enter(view)  # from here on, the run's own namespaces: pid 2, no capabilities
        except Unavailable as error:
            print(f"kata grade: the run's namespaces could not be made: {error}", file=sys.stderr, flush=True)
            return False
        try:  # the run's CPU, kept (grader.grading.sandbox pins it): whatever it starts slows only itself
            seccomp.pinned()
        except Unavailable:
            pass  # (no filter for this machine: it keeps its CPU unless it asks for others)
    set_limits(limits)
    return True


def set_limits(limits: Limits, file_size: bool = True) -> None:
    """The run's CPU seconds, no core files, its memory on top of what this process maps, and
    (`file_size`) the size of any file it writes: not in a tests' process, whose log is the one
    the code process fills."""
    cpu = max(1, int(limits.cpu))
    wanted = [(resource.RLIMIT_CPU, (cpu, cpu + 2)), (resource.RLIMIT_CORE, (0, 0))]
    if file_size:
        wanted.append((resource.RLIMIT_FSIZE, (limits.file_size,) * 2))
    try:  # the budget comes on top of what the preloaded parent already maps (torch, above all)
        with open("/proc/self/statm") as f:
            address_space = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        wanted.append((resource.RLIMIT_AS, (address_space + limits.memory,) * 2))
    except (OSError, ValueError):
        pass
    for which, value in wanted:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass  # a limit the system does not let us set: the parent's wall clock still holds


def clean_environment(job: Job) -> None:
    """A minimal environment, the grading copy as the working directory, none of the kit's
    folders on sys.path (`import solutions` fails)."""
    home = str(job.home)
    os.environ.clear()
    os.environ.update(
        {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": os.path.join(home, "tmp"),
            "LANG": "C.UTF-8",
            "HYPOTHESIS_PROFILE": "grading",
            "OMP_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            # Scanning every installed package for pytest plugins costs time in every run: name the two needed.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
    )
    import tempfile

    import hypothesis.configuration

    tempfile.tempdir = None  # found again from TMPDIR
    # Hypothesis keeps a cache of the constants in the sources it reads: in the run's own home,
    # not in the grader's working folder, which it picked when the parent imported it.
    hypothesis.configuration.set_hypothesis_home_dir(os.path.join(home, ".hypothesis"))
    os.chdir(job.workdir)
    kit = Path(__file__).resolve().parents[2]
    sys.path[:] = [str(job.workdir)] + [p for p in sys.path if p and Path(p).resolve() != kit]
    sys.path_importer_cache.clear()
    sys.dont_write_bytecode = True
