"""Files the tools write (reports, the status cache, a class's results): whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a reader, or a crash halfway, never sees half a file.

    The temporary name carries the process id, so two processes writing the same file at once
    (two `kata status` in two terminals) do not write into each other's temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_json(path: Path, data, *, indent: int = 1) -> None:
    """`data` as JSON, written as `write_text` writes."""
    write_text(path, json.dumps(data, indent=indent))
