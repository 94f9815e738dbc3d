"""JSON files the tools write (reports, the status cache): whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_json(path: Path, data, *, indent: int = 1) -> None:
    """Write `data` to `path` atomically: a reader, or a crash halfway, never sees half a file.

    The temporary name carries the process id, so two processes writing the same file at once
    (two `kata status` in two terminals) do not write into each other's temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    tmp.replace(path)
