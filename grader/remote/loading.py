"""Loading the module under test into the code process (S), and a stand-in for it here.

Before anything of the learner's is in S, the protocol's cost of a timed call is measured
(grader.remote.timed.calibrate). The code's files are read here, once each, for what reaches
past its own code (grader.testing.source.reaching), and the kit's answer, what timed results
are checked against, is imported here from its file.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from grader import running
from grader.learners_code import load_file
from grader.remote import timed
from grader.remote.connection import Connection
from grader.remote.stand_in import RemoteModule
from grader.testing.source import reaching


def load(
    connection: Connection,
    root: Path,
    name: str,
    stem: str,
    tree: str,
    mutant: Path | None,
    file: Path | None,
    source: Path,
) -> RemoteModule:
    """The module under test, imported in S; its import error raised here (grader.plugin.target
    makes it a NotImportable)."""
    if connection.overhead is None and connection.timing:  # before anything of the learner's is in S
        timed.calibrate(connection)
    roots = {source.parent, *([mutant.parent] if mutant else [])}
    # S names a file as it was given its path, or resolved: beneath either form (read_beneath
    # walks from the root by name, so a name's own form decides where it may lead)
    connection.roots = tuple(dict.fromkeys([*(p.absolute() for p in roots), *(p.resolve() for p in roots)]))
    reply = connection.request(
        {
            "op": "load",
            "root": str(root),
            "lesson": name,
            "stem": stem,
            "tree": tree,
            "mutant": str(mutant) if mutant else None,
            "file": str(file) if file else None,
            "roots": [str(p) for p in roots],
            "timeout": connection.left(),  # a loop at import time is the test's
        }
    )
    answer = sorted(((connection.kit or root) / "solutions" / name).glob("*.py"))  # none in a learner's copy
    _read_reaching(connection, [*sorted(source.parent.glob("*.py")), *([mutant] if mutant else [])], answer)
    return RemoteModule(
        connection,
        int(reply["module"]),
        f"{tree}.{name}.{stem}",
        str(source),
        _reference(connection.kit or root, name, stem),
        (source, *([mutant] if mutant else [])),
    )


def _read_reaching(connection: Connection, files: list[Path], answer: list[Path]) -> None:
    """Read the code's files, each once, for what reaches past its own code to act on the
    checks, and for what the lesson's `answer` does not need (grader.testing.source.reaching):
    what such a run shows of itself may be a lie, so the lesson is flagged for a person to read."""
    files = [file for file in files if file not in connection.read]
    connection.read.update(files)
    if found := reaching(files, answer):
        where = ", ".join(f"{Path(s.file).name}:{s.line} {s.word}" for s in found[:3])
        running.note_review(
            f"the source reaches past what its answer needs ({where}{', ...' if len(found) > 3 else ''}): "
            "an import, a private attribute, a name looked up at run time, another's object changed, frames, "
            "the grader or threads; what its run showed may not be what it did"
        )


def _reference(root: Path, name: str, stem: str) -> ModuleType | None:
    """The kit's answer to the lesson, imported in this process (trusted code) from its file, or
    None where the kit has none (a learner's copy)."""
    source = root / "solutions" / name / f"{stem}.py"
    return load_file(f"_kata_reference.{name}.{stem}", source) if source.is_file() else None
