"""The learner's code, as whichever process holds it sees it: importing the module under test,
which files are the learner's, and which of its functions are untouched stubs.

The tests' process asks here in-process (grader.plugin.target, grader.plugin.untouched), and so
does the code process under ``--kata-remote`` (grader.remote.server): one answer either way.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from types import FunctionType

from grader.stubs import is_untouched_def


def import_code(root: Path, name: str, stem: str, tree: str, mutant: Path | None, file: Path | None):
    """Module `stem` of lesson `name`: from `tree` of the kit at `root`, from one `file`, or the
    reference with a `mutant` swapped in. Raises what importing it raises."""
    if mutant:
        return _load_with_mutant(name, stem, root / "solutions" / name / f"{stem}.py", mutant)
    if file:  # every module of the lesson is this one file
        return load_file(f"_kata_impl.{name}.{stem}", file)
    return importlib.import_module(f"{tree}.{name}.{stem}")


def load_file(name: str, path: Path):
    """A module executed from `path` under `name` (registered, so pickling by reference works)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_with_mutant(lesson: str, stem: str, source: Path, mutant: Path):
    """A private copy of the reference module with the mutant's definitions executed into it."""
    module = load_file(f"_kata_mutant.{lesson}.{stem}", source)
    code = compile(mutant.read_text(encoding="utf-8"), str(mutant), "exec")
    exec(code, module.__dict__)
    return module


def is_learners(path: Path | str, code: tuple[Path, ...]) -> bool:
    """True for a file of the code under test."""
    resolved = _resolved(str(path))
    return any(resolved == root or resolved.is_relative_to(root) for root in code)


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> Path:
    """A code object's file, resolved once: every frame of every failure asks."""
    return Path(path).resolve()


def raise_from(stub: FunctionType | type) -> None:
    """Call `stub` (or build the class) with None for each argument it requires: the
    function's, or the class's __init__'s, only statement raises."""
    required = [p for p in inspect.signature(stub).parameters.values() if p.default is p.empty]
    positional = [None for p in required if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name: None for p in required if p.kind is p.KEYWORD_ONLY}
    stub(*positional, **keywords)
    raise AssertionError(f"{stub.__qualname__} returned: it is not an untouched stub")  # cannot happen


def is_untouched(obj, code_roots: tuple[Path, ...]) -> bool:
    """True for a plain function of the learner's whose body, a docstring aside, is one
    ``raise NotImplementedError`` (with constant arguments, if any), and for a class of
    theirs whose own __init__ is such a function (after ``super().__init__()``, if any):
    building one raises, whatever the test then does with it."""
    if isinstance(obj, type):
        obj = obj.__dict__.get("__init__")
    return isinstance(obj, FunctionType) and not hasattr(obj, "__wrapped__") and _is_untouched(obj.__code__, code_roots)


@functools.cache
def _is_untouched(code, code_roots: tuple[Path, ...]) -> bool:
    if not is_learners(code.co_filename, code_roots):
        return False
    try:
        source = textwrap.dedent(inspect.getsource(code))
        node = ast.parse(source).body[0]
    except (OSError, SyntaxError, IndexError):
        return False
    return is_untouched_def(node)
