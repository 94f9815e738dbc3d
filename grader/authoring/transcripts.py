"""A lesson's transcript: what a learner reads in the terminal, for the untouched stub and for
each mutant, committed as tests/NN/transcript.md and reviewed as code.

`kata verify` runs the stub and every mutant anyway; `transcript` makes the file's text from
those runs' terminal output, and verify fails when the committed file differs from it
(`kata verify NN --write-transcripts` writes it again). Of the output it keeps what is a
message: pytest's failure sections and the kit's summary (the TODOs, what could not import),
not the progress line, pytest's warnings and short summary, or the counts and time of the
last line. What differs from run to run or machine to machine (times, speed ratios, memory
addresses, the kit's folder, temporary folders, process ids, object ids) is replaced by a
placeholder, and a speed test's failure, which comes and goes with the machine's load, is left
out, so the text is the same wherever the runs are.
"""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path

from grader.lessons import Lesson, mutant_constant

FILE = "transcript.md"

# pytest's section lines ("==== FAILURES ====") and the one that ends a run ("2 failed in 3.1s").
_SECTION = re.compile(r"^=+ (?P<title>.+?) =+$")
_LAST = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+ in [\d.]+s(?: \([\d:]+\))?\s*=*$")
_DROPPED = ("warnings summary", "short test summary info")
_MEASURED = "<measured speed against>"
_VOLATILE = [  # (pattern, placeholder), in order
    (re.compile(r"/tmp/[\w./-]*"), "<tmp>"),
    (re.compile(r"\b0x[0-9a-f]{10,16}\b"), "<address>"),  # an object's, not a bit pattern (0x80000000, 0x7FFF_0000)
    (re.compile(r"\b\d+(?:\.\d+\s?s|(?:\.\d+)?\s?(?:ms|µs|us|ns))\b"), "<time>"),  # (not "the 1s")
    (re.compile(r"\b\d+\.\d+x\b"), "<ratio>x"),  # a measured 3.52x, not the lesson's 5x^2 + 3
    # a speed test's measured ratio in words (grader.testing.speed.plainly), not what it must reach
    (
        re.compile(r"\b(?:ran about as fast as|ran [\d.]+ times as fast as|took [\d.]+ times as long as)"),
        "<measured speed against>",
    ),
    # an object's id() (a KeyError of a dict keyed by one: 15 digits), not a float's fraction or a size
    (re.compile(r"(?<![\d.])\b\d{14,}\b(?!\.\d)"), "<id>"),
    # a Python float's full repr (0.8892...: 12 decimals or more): its last digits may differ on
    # another CPU, and a generator the code left unseeded draws it afresh (09's seed tests)
    (re.compile(r"(?<=\d\.)\d{12,}\b"), "<digits>"),
    (re.compile(r"\btmp[a-z0-9_]{8}\b"), "tmp<random>"),  # tempfile's names
    (re.compile(r"\bimage \d+\b"), "image <n>"),  # which of 06's freshly drawn images shows a mistake first
    # a NumPy array's values, drawn afresh each run (a dataset's image), however many lines
    (re.compile(r"array\(\[[\[\]\d\s,.eE+-]*\](?:, dtype=\w+)?\)"), "array(<values>)"),
    # TorchScript's traceback in a quoted error, cut where the kit's folder's length puts the cut
    (re.compile(r"(The following operation failed in the TorchScript interpreter\.)\\n[^'\n]*"), r"\1 <traceback>"),
    (re.compile(r"\b(pid|process) \d+"), r"\1 <pid>"),
]

_PLACEHOLDERS = ", ".join(dict.fromkeys(re.sub(r"\\\d", "", placeholder).strip() for _, placeholder in _VOLATILE))

_MUTANT = re.compile(r"(?<![\w/])tests/(?P<lesson>\d\d_[a-z0-9_]+)/mutants/\w+\.py")
_REFERENCE = re.compile(r"(?<![\w/])solutions/(?P<lesson>\d\d_[a-z0-9_]+)/")


def _module(root: Path, name: str) -> str:
    """The stem of the lesson's one module (a mutant replaces it)."""
    stems = Lesson(Path(root), name).modules()
    return stems[0] if len(stems) == 1 else "<module>"


def path(lesson) -> Path:
    return lesson.tests_dir / FILE


def messages(output: str, root: Path) -> str:
    """What a learner reads of one run's terminal output: its message sections, made stable."""
    kept, keep = [], False
    for line in output.splitlines():
        section = _SECTION.match(line)
        if _LAST.match(line):
            continue
        if section:
            keep = section["title"] not in _DROPPED
        if keep:
            kept.append(line.rstrip())
    return "\n".join(_without_speed(stable("\n".join(kept).strip(), root).splitlines()))


_TEST = re.compile(r"^_+ .+ _+$")  # pytest's header of one test's failure


def _without_speed(lines: list[str]) -> list[str]:
    """`lines` without the failures of speed tests: whether a wrong answer is fast enough moves
    with the machine's load, and the transcript must read the same on every machine."""
    kept, block = [], []
    for line in [*lines, None]:
        if line is None or _TEST.match(line) or _SECTION.match(line):
            if not any(_MEASURED in part for part in block):
                kept += block
            block = []
        if line is not None:
            block.append(line)
    return kept


def stable(text: str, root: Path) -> str:
    """`text` with what differs between runs and machines replaced by placeholders, and the code
    under test named where a learner's would be: a mutant's file, and the reference's that
    holds the rest of a mutant's lesson, read as the lesson's file in exercises/."""
    text = text.replace(f"{Path(root).resolve()}/", "").replace(f"{root}/", "")
    text = _MUTANT.sub(lambda m: f"exercises/{m['lesson']}/{_module(root, m['lesson'])}.py", text)
    text = _REFERENCE.sub(r"exercises/\g<lesson>/", text)
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def transcript(lesson, stub_output: str, mutant_outputs: list[tuple[Path, str]]) -> str:
    """The transcript.md of `lesson`: the untouched stub's messages, then each mutant's (in name order)."""
    name = lesson.name
    parts = [
        f"# What a learner reads: {name}\n",
        f"The messages `pytest exercises/{name}` prints for the untouched stub and for each mutant in "
        "`mutants/`, as `kata verify` runs them (hypothesis's `grading` profile); what differs between runs "
        f"and machines is a placeholder ({_PLACEHOLDERS}), a speed test's failure (which moves with the machine's load) "
        "is left out, and a mutant's file is named as the lesson's file in exercises/. `kata verify` fails when a run reads otherwise; "
        f"`python -m grader verify {name} --write-transcripts` writes this file again. Review its diff as code.\n",
        "## The untouched stub\n",
        _fenced(messages(stub_output, lesson.root)),
    ]
    for mutant, output in sorted(mutant_outputs):
        varies = mutant_constant(mutant, "VARIES")  # why its messages differ from run to run
        told = (
            f"(not recorded: what it prints varies from run to run: {varies})"
            if varies
            else messages(output, lesson.root)
        )
        # a message that names the file alone ("(at crashes_on_missing_grad.py:10)") names the learner's
        told = re.sub(rf"(?<![\w/.]){re.escape(mutant.name)}\b", f"{_module(lesson.root, name)}.py", told)
        parts += [f"## mutants/{mutant.name}: {_summary(mutant)}\n", _fenced(told)]
    return "\n".join(parts)


def drift(committed: str | None, current: str, lesson) -> str | None:
    """Why the committed transcript is not `current`, with a short diff and the command that
    writes it, or None when it is."""
    rewrite = f"python -m grader verify {lesson.name} --write-transcripts"
    where = path(lesson).relative_to(lesson.root)
    if committed is None:
        return f"{where} is missing: write it with `{rewrite}`, then read it."
    if committed == current:
        return None
    diff = list(
        difflib.unified_diff(committed.splitlines(), current.splitlines(), "committed", "this run", lineterm="", n=1)
    )
    shown = diff[:30] + ([f"... ({len(diff) - 30} more lines of diff)"] if len(diff) > 30 else [])
    return (
        f"{where} is not what a learner reads now:\n"
        + "\n".join(shown)
        + f"\n  If the change is meant, write it again with `{rewrite}` and review its diff."
    )


def _fenced(text: str) -> str:
    return f"````text\n{text or '(nothing: every test passed)'}\n````\n"


def _summary(mutant: Path) -> str:
    doc = ast.get_docstring(ast.parse(mutant.read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else "(no docstring)"
