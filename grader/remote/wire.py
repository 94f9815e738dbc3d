"""What crosses between the tests (T) and the code under test (S): plain data, one frame at a time.

A frame is an 8-byte length and a payload: a JSON header (the message's tree, each container
and scalar tagged with its type, and where each tensor's bytes lie, with its dtype, shape,
strides and offset), then the raw bytes of each tensor storage once (two views of one storage
stay views of one). Reading one builds tensors, Python scalars, strings and containers, dtypes,
devices and sizes from JSON and bytes, and nothing else: no pickle is ever read, so nothing S
sends runs here (torch's weights-only loading would do the same at ten times the cost of a
small message: docs/MEASUREMENTS.md). `decode` builds each part by exact type from its tag, so
what S sends is data and never behaviour.

An exception crosses as a record: its nearest built-in type (a torch error is the built-in it
derives from), its message, its notes, and the learner's frames (file, line, function).
"""

from __future__ import annotations

import builtins
import json
import math
import socket
import struct
import traceback
from pathlib import Path

import numpy as np
import torch

MAX_FRAME = 1 << 30  # bytes: a larger frame ends the connection
MAX_TEXT = 4000  # characters kept of an exception's message
MAX_FRAMES = 40  # learner's frames kept of a traceback
_LENGTH = struct.Struct(">Q")
_HEADER = struct.Struct(">I")
_ALIGN = 64
_SCALARS = (type(None), bool, int, float, complex, str, torch.dtype, torch.device)
_NDARRAY = "__ndarray__"  # a NumPy array crosses as {_NDARRAY: its tensor}
_VIEW = "__view_of__"  # a result on an argument's storage crosses as {_VIEW: [its index, dtype, shape, stride, offset]}


class Broken(Exception):
    """The other side sent something that is not a frame of plain data, or went away."""


# --- values --------------------------------------------------------------------------------


def plain(value):
    """`value` as data that crosses: tensors detached, NumPy arrays and scalars as torch's and
    Python's, tuples and lists and dicts kept. Raises TypeError on anything else."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, np.ndarray):
        return {_NDARRAY: torch.from_numpy(np.ascontiguousarray(value))}
    if isinstance(value, np.generic):
        return value.item()
    if type(value) in _SCALARS or isinstance(value, torch.Size):
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value) if type(value) in (tuple, list) else tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {plain_key(k): plain(v) for k, v in value.items()}
    raise TypeError(f"a {type(value).__module__}.{type(value).__qualname__} cannot cross to the other process")


_DESCEND = object()  # what a `_map_tree` leaf function answers for a part it leaves to the walk


def _map_tree(value, leaf):
    """`value` with each part that `leaf` answers (anything but _DESCEND) replaced by its answer;
    tuples, lists and dicts it does not answer are walked, the rest kept."""
    answer = leaf(value)
    if answer is not _DESCEND:
        return answer
    if type(value) in (tuple, list):
        return type(value)(_map_tree(v, leaf) for v in value)
    if type(value) is dict:
        return {k: _map_tree(v, leaf) for k, v in value.items()}
    return value


def as_views(value, arguments: list[torch.Tensor]):
    """`value` (plain) with each tensor that lies on the storage of one of the call's tensor
    `arguments` told as a view of it (`_VIEW`), not sent: the other side makes it a view of its
    own argument, so memory shared in one process is shared in the other (a write into the
    argument shows through the result, `data_ptr` says they share)."""
    owners = {t.untyped_storage()._cdata: i for i, t in reversed(list(enumerate(arguments)))}

    def leaf(v):
        if type(v) is torch.Tensor and (i := owners.get(v.untyped_storage()._cdata)) is not None:
            return {
                _VIEW: [i, str(v.dtype).removeprefix("torch."), list(v.shape), list(v.stride()), v.storage_offset()]
            }
        return v if type(v) is dict and set(v) == {_NDARRAY} else _DESCEND  # (an array is a copy already)

    return _map_tree(value, leaf) if owners else value


def with_views(value, arguments: list[torch.Tensor]):
    """`value` as decoded, each `_VIEW` made the view of `arguments[index]`'s storage it tells
    of (`as_views`); one that does not fit that storage breaks the frame."""

    def leaf(v):
        if not (type(v) is dict and set(v) == {_VIEW}):
            return _DESCEND
        try:
            index, name, shape, stride, offset = v[_VIEW]
            storage = arguments[int(index)].untyped_storage()
            dtype, shape, stride, offset = _dtype(name), [int(n) for n in shape], [int(n) for n in stride], int(offset)
            if storage.device.type != "meta" and not fits(storage.nbytes(), dtype.itemsize, shape, stride, offset):
                raise ValueError("it does not lie within the argument's storage")  # set_ would grow the argument's
            return torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, shape, stride)
        except (ValueError, TypeError, IndexError, RuntimeError, Broken) as exc:
            raise Broken(f"a view of an argument that is not one ({type(exc).__name__}: {str(exc)[:200]})") from None

    return _map_tree(value, leaf)


def fits(nbytes: int, itemsize: int, shape: list[int], stride: list[int], offset: int) -> bool:
    """Whether a tensor of `shape` and `stride`, from element `offset`, reads only the `nbytes`
    of its storage (so making it neither reads past nor grows the storage) and holds at most
    MAX_FRAME bytes of elements (so copying it, expanded, cannot take this process's memory)."""
    if offset < 0 or len(shape) != len(stride) or any(n < 0 for n in shape) or any(s < 0 for s in stride):
        return False
    if 0 in shape:  # reads nothing, and grows nothing, wherever it starts
        return True
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride))
    return (last + 1) * itemsize <= nbytes and math.prod(shape) * itemsize <= MAX_FRAME


def plain_key(key):
    if type(key) in (str, int):
        return key
    raise TypeError(f"a dict key of type {type(key).__qualname__} cannot cross to the other process")


def encode(message) -> bytes:
    """`message` (plain data) as a payload: a JSON header, then each tensor storage's bytes."""
    storages: dict[tuple[int, int], int] = {}
    tensors: list[list] = []
    blobs: list[bytes] = []
    offset = 0

    def tensor(t: torch.Tensor) -> int:
        nonlocal offset
        if t.device.type == "meta":  # no bytes: its storage's size, so its offset and strides stay as they are
            tensors.append(
                [
                    str(t.dtype).removeprefix("torch."),
                    list(t.shape),
                    list(t.stride()),
                    t.storage_offset(),
                    t.untyped_storage().nbytes(),
                    "meta",
                ]
            )
            return len(tensors) - 1
        storage = t.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if key not in storages:
            data = (
                torch.empty(0, dtype=torch.uint8, device="cpu").set_(storage).numpy().tobytes()
                if storage.nbytes()
                else b""
            )
            padding = -len(data) % _ALIGN
            blobs.append(data + b"\0" * padding)
            storages[key] = offset
            offset += len(data) + padding
        tensors.append(
            [
                str(t.dtype).removeprefix("torch."),
                list(t.shape),
                list(t.stride()),
                t.storage_offset(),
                storages[key],
                storage.nbytes(),
            ]
        )
        return len(tensors) - 1

    def tree(v):
        kind = type(v)
        if v is None or kind in (bool, int, float, str):
            return v
        if kind is torch.Tensor:
            return ["t", tensor(v.detach().cpu() if v.device.type not in ("cpu", "meta") else v.detach())]
        if kind in (list, tuple):
            return ["L" if kind is list else "T", [tree(x) for x in v]]
        if kind is dict:
            return ["D", [[k, tree(x)] for k, x in v.items()]]
        if kind is torch.Size:
            return ["S", list(v)]
        if kind is complex:
            return ["c", v.real, v.imag]
        if kind is torch.dtype:
            return ["dt", str(v).removeprefix("torch.")]
        if kind is torch.device:
            return ["dv", str(v)]
        raise TypeError(f"a {kind.__qualname__} cannot cross to the other process")

    header = json.dumps({"v": tree(message), "t": tensors}).encode()
    return _HEADER.pack(len(header)) + header + b"".join(blobs)


def decode(payload: bytes):
    """A payload as plain data: built from JSON and raw bytes, never by unpickling anything."""
    try:
        (size,) = _HEADER.unpack_from(payload)
        header = json.loads(payload[_HEADER.size : _HEADER.size + size])
        data = memoryview(payload)[_HEADER.size + size :]
        storages: dict[int, torch.UntypedStorage] = {}  # by where their bytes lie: views of one stay so
        tensors = [_tensor(entry, data, storages) for entry in header["t"]]
        return _tree(header["v"], tensors, 0)
    except Broken:
        raise
    except Exception as exc:  # noqa: BLE001 (anything malformed is a broken frame)
        raise Broken(f"not a frame of plain data ({type(exc).__name__}: {str(exc)[:200]})") from None


def _dtype(name) -> torch.dtype:
    dtype = getattr(torch, name) if isinstance(name, str) and name.isidentifier() else None
    if type(dtype) is not torch.dtype:
        raise Broken(f"no dtype {name!r}")
    return dtype


def _tensor(entry, data: memoryview, storages: dict) -> torch.Tensor:
    name, shape, stride, storage_offset, at, nbytes = entry
    dtype, shape, stride = _dtype(name), [int(n) for n in shape], [int(n) for n in stride]
    if nbytes == "meta":
        storage = torch.UntypedStorage(int(at), device="meta")
        return torch.empty(0, dtype=dtype, device="meta").set_(storage, int(storage_offset), shape, stride)
    at, nbytes, storage_offset = int(at), int(nbytes), int(storage_offset)
    if not (0 <= at and 0 <= nbytes and at + nbytes <= len(data)):
        raise Broken("a tensor's bytes lie outside the frame")
    if not fits(nbytes, dtype.itemsize, shape, stride, storage_offset):
        raise Broken(f"a tensor of shape {shape[:8]} and strides {stride[:8]} that its {nbytes} bytes do not hold")
    storage = storages.get(at)
    if storage is None or storage.nbytes() != nbytes:
        storage = (
            torch.frombuffer(bytearray(data[at : at + nbytes]), dtype=torch.uint8).untyped_storage()
            if nbytes
            else torch.UntypedStorage(0, device="cpu")
        )
        storages[at] = storage
    return torch.empty(0, dtype=dtype, device="cpu").set_(storage, storage_offset, shape, stride)


def _tree(v, tensors: list[torch.Tensor], depth: int):
    """The value a header's tree tells of. Each part is built here from its tag, of the exact
    type the tag names (json gives exact types too): no subclass of anything, and nothing else."""
    if depth > 64:
        raise Broken("data nested more than 64 deep")
    if v is None or type(v) in (bool, int, float, str):
        return v
    tag, *rest = v
    if tag == "t":
        return tensors[int(rest[0])]
    if tag in ("L", "T"):
        items = [_tree(x, tensors, depth + 1) for x in rest[0]]
        return items if tag == "L" else tuple(items)
    if tag == "D":
        value = {}
        for k, x in rest[0]:
            if type(k) not in (str, int):
                raise Broken(f"a dict key of type {type(k).__name__}")
            value[k] = _tree(x, tensors, depth + 1)
        if set(value) == {_NDARRAY} and type(value[_NDARRAY]) is torch.Tensor:
            return value[_NDARRAY].numpy()
        return value
    if tag == "S":
        return torch.Size(int(n) for n in rest[0])
    if tag == "c":
        return complex(float(rest[0]), float(rest[1]))
    if tag == "dt":
        return _dtype(rest[0])
    if tag == "dv":
        return torch.device(str(rest[0]))
    raise Broken(f"an unknown tag {tag!r}")


# --- frames --------------------------------------------------------------------------------


def send(sock: socket.socket, message) -> int:
    """Send one message; returns its size in bytes."""
    payload = encode(message)
    sock.sendall(_LENGTH.pack(len(payload)) + payload)
    return len(payload)


def receive_payload(sock: socket.socket) -> bytes | None:
    """The next frame's payload, not yet decoded, or None at the end of the connection."""
    header = _read(sock, _LENGTH.size)
    if header is None:
        return None
    (length,) = _LENGTH.unpack(header)
    if length > MAX_FRAME:
        raise Broken(f"a frame of {length} bytes")
    payload = _read(sock, length)
    if payload is None:
        raise Broken("the connection ended inside a frame")
    return payload


def _read(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# --- exceptions ----------------------------------------------------------------------------


def error_record(exc: BaseException, roots: tuple[Path, ...]) -> dict:
    """`exc` as data: its nearest built-in type, message, notes, and the frames of files under
    `roots` (the learner's), outermost first. A SyntaxError keeps where it is."""
    builtin = next(t for t in type(exc).__mro__ if getattr(builtins, t.__name__, None) is t)
    frames = [
        (f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__) if under(f.filename, roots)
    ]
    record = {
        "type": builtin.__name__,
        "name": type(exc).__name__,
        "message": str(exc)[:MAX_TEXT],
        "notes": [str(n)[:MAX_TEXT] for n in getattr(exc, "__notes__", ())][:10],
        "frames": frames[-MAX_FRAMES:],
    }
    if isinstance(exc, SyntaxError):
        record["syntax"] = [exc.msg or "", exc.filename or "", exc.lineno or 0, exc.offset or 0, exc.text or ""]
    if isinstance(exc, OSError) and type(exc.errno) is int:  # which limit a write ran into (EFBIG)
        record["errno"] = exc.errno
    return record


def under(filename: str, roots: tuple[Path, ...]) -> bool:
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(path == root or path.is_relative_to(root) for root in roots)
