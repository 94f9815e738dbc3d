"""Memory T and S share, for timed calls: tensors placed in it cross without being copied twice.

T creates it (`create`, a memfd, sparse: pages exist once written) before S exists, and S
inherits it. A timed call's tensors are described in its message (`place`: where each
storage lies, its dtype, shape, strides, offset) and their values written just before the call
starts; S reads them in place (`resolve`) and writes its result's tensors after them
(`put`), which T copies out (`take`), checking that each lies inside the memory.
"""

from __future__ import annotations

import mmap
import os
import random

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from grader.remote import wire

SIZE = 256 << 20  # bytes; the inputs of a timed call that do not fit travel in its message
_ALIGN = 64
_SPREAD = 4 << 20  # bytes of room where a timed call's inputs may start
_KEY = "__shared__"
_MADV_POPULATE_WRITE = 23  # linux/mman.h


def create() -> int:
    """A descriptor of fresh shared memory of SIZE bytes."""
    fd = os.memfd_create("kata-remote", os.MFD_CLOEXEC)
    os.ftruncate(fd, SIZE)
    os.set_inheritable(fd, True)
    return fd


class Shared:
    def __init__(self, fd: int) -> None:
        self.map = mmap.mmap(fd, SIZE)
        self.bytes = torch.frombuffer(self.map, dtype=torch.uint8)
        self.end = 0  # where the inputs end: S's result goes after them

    def _view(self, offset: int, nbytes: int, dtype: torch.dtype, shape, stride, storage_offset: int) -> torch.Tensor:
        """The tensor whose storage is the `nbytes` at `offset` (a multiple of its item size): a
        storage of that size of its own, as an argument made for the call would have, not a view
        of the whole shared memory (whose size would tell a timed call from any other)."""
        if offset % dtype.itemsize or not wire.fits(nbytes, dtype.itemsize, shape, stride, storage_offset):
            raise ValueError("a tensor reaching outside its storage, or larger than a frame")
        if offset + nbytes > SIZE:
            raise ValueError("a tensor reaching outside the shared memory")
        storage = (
            torch.frombuffer(self.map, dtype=torch.uint8, count=nbytes, offset=offset).untyped_storage()
            if nbytes
            else torch.empty(0, dtype=torch.uint8).untyped_storage()
        )
        return torch.empty(0, dtype=dtype, device="cpu").set_(storage, storage_offset, shape, stride)

    def _describe(self, t: torch.Tensor, offset: int) -> dict:
        return {
            _KEY: [
                offset,
                t.untyped_storage().nbytes(),
                t.dtype,
                list(t.shape),
                list(t.stride()),
                t.storage_offset(),
                t.requires_grad,
            ]
        }

    def place(self, tree):
        """(`tree` with each tensor replaced by where it will lie, a function that writes their
        values there), or None when they do not fit."""
        leaves, spec = tree_flatten(tree)
        # A random start: no two calls' inputs lie at one address, so an answer kept per address
        # (a cache keyed by data_ptr) is not found again.
        offset = random.randrange(_SPREAD // _ALIGN) * _ALIGN
        writes, described = [], []
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu":
                nbytes = leaf.untyped_storage().nbytes()
                if offset + nbytes > SIZE // 2:
                    return None
                described.append(self._describe(leaf, offset))
                writes.append((offset, leaf))
                offset += -(-nbytes // _ALIGN) * _ALIGN
            elif isinstance(leaf, torch.Tensor):
                return None
            else:
                described.append(leaf)
        self.end = offset

        def write():
            for at, t in writes:
                source = torch.empty(0, dtype=torch.uint8, device="cpu").set_(t.detach().untyped_storage())
                self.bytes[at : at + source.numel()].copy_(source)

        return tree_unflatten(described, spec), write

    def resolve(self, tree):
        """S's side: `tree` with each placed tensor a view of the shared memory."""
        leaves, spec = tree_flatten(tree, is_leaf=_is_placed)
        found = []
        for leaf in leaves:
            if _is_placed(leaf):
                offset, nbytes, dtype, shape, stride, storage_offset, grad = leaf[_KEY]
                leaf = self._view(offset, nbytes, dtype, shape, stride, storage_offset).requires_grad_(grad)
                self.end = max(self.end, offset + -(-nbytes // _ALIGN) * _ALIGN)
            found.append(leaf)
        return tree_unflatten(found, spec)

    def populate(self) -> None:
        """S's side: map in every page the inputs lie on now (Linux 5.14's MADV_POPULATE_WRITE;
        elsewhere, nothing), so a timed call's first touch of a page is not a page fault."""
        try:
            self.map.madvise(_MADV_POPULATE_WRITE, 0, -(-self.end // mmap.PAGESIZE) * mmap.PAGESIZE or mmap.PAGESIZE)
        except (OSError, ValueError):
            pass

    def put(self, tree):
        """S's side: `tree` with each tensor copied after the inputs and replaced by where it lies
        (a tensor that does not fit stays in the message)."""
        leaves, spec = tree_flatten(tree)
        offset, placed = self.end, []
        base = self.bytes.data_ptr()
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu" and not leaf.requires_grad:
                at = leaf.untyped_storage().data_ptr() - base
                if 0 <= at < SIZE:
                    placed.append(self._describe(leaf, at))  # a view of an input: it lies where it is
                    continue
                nbytes = leaf.untyped_storage().nbytes()
                if offset + nbytes <= SIZE:
                    source = torch.empty(0, dtype=torch.uint8, device="cpu").set_(leaf.untyped_storage())
                    self.bytes[offset : offset + nbytes].copy_(source)
                    placed.append(self._describe(leaf, offset))
                    offset += -(-nbytes // _ALIGN) * _ALIGN
                    continue
            placed.append(leaf)
        return tree_unflatten(placed, spec)

    def take(self, tree):
        """T's side: `tree` with each tensor S placed copied out; a place outside the memory, or
        not a place, is refused (ValueError)."""
        leaves, spec = tree_flatten(tree, is_leaf=_is_placed)
        found, copied = [], 0
        for leaf in leaves:
            if _is_placed(leaf):
                try:
                    offset, nbytes, dtype, shape, stride, storage_offset, _ = leaf[_KEY]
                    if not (0 <= offset and 0 <= nbytes and offset + nbytes <= SIZE and type(dtype) is torch.dtype):
                        raise ValueError("outside the shared memory")
                    view = self._view(
                        int(offset),
                        int(nbytes),
                        dtype,
                        [int(n) for n in shape],
                        [int(n) for n in stride],
                        int(storage_offset),
                    )
                    copied += view.numel() * dtype.itemsize
                    if copied > SIZE:  # each copy is dense: expanded views could ask for any amount
                        raise ValueError("results larger, copied out, than the shared memory")
                    leaf = view.clone()
                except (ValueError, TypeError, RuntimeError) as exc:
                    raise ValueError(f"a result placed wrongly in shared memory: {exc}") from None
            found.append(leaf)
        return tree_unflatten(found, spec)


def _is_placed(leaf) -> bool:
    return type(leaf) is dict and set(leaf) == {_KEY} and type(leaf[_KEY]) is list and len(leaf[_KEY]) == 7
