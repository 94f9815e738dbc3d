"""Gradients across processes: a call of the code under test whose inputs track gradients
goes through an autograd.Function (`_Remote`) whose backward asks the code process (S) for the
vector-Jacobian product, on the graph S kept of the call (its handle, freed when this side's
node is)."""

from __future__ import annotations

import weakref

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from grader import running
from grader.remote import wire
from grader.remote.call_context import recording, take_recorded


def call_tracking(function, args, kwargs, tensors: list[torch.Tensor]):
    """The result of calling `function` (a grader.remote.stand_in.RemoteFunction) on `tensors`,
    the call's tensors, some of which track gradients: as the call returned it, its tensors
    the autograd.Function's outputs."""
    __tracebackhide__ = True
    holder = _Holder()
    outputs = _Remote.apply(function, holder, args, kwargs, *tensors)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return holder.rebuild(outputs)


class _Holder:
    """Where a gradient-tracking call keeps its result's structure (autograd.Function returns
    tensors only)."""

    def __init__(self) -> None:
        self.spec = None
        self.others: list = []

    def rebuild(self, tensors):
        leaves, tensors = list(self.others), iter(tensors)
        leaves = [next(tensors) if leaf is _TENSOR else leaf for leaf in leaves]
        return tree_unflatten(leaves, self.spec)


_TENSOR = object()


class _Remote(torch.autograd.Function):
    """A call of the code under test whose result tracks gradients: backward asks S."""

    @staticmethod
    def forward(ctx, function, holder: _Holder, args, kwargs, *tensors):
        reply = function.call(args, kwargs, list(tensors), grad=[t.requires_grad for t in tensors])
        leaves, holder.spec = tree_flatten(reply["value"])
        outputs = tuple(leaf for leaf in leaves if isinstance(leaf, torch.Tensor))
        holder.others = [_TENSOR if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        tracks = reply.get("tracks") or []
        # Backward may run in another thread (autograd's for a device), where the running test is not
        # set: it is taken here, in the test's.
        ctx.function, ctx.handle, ctx.test = function, reply.get("handle"), running.current()
        ctx.set_materialize_grads(False)
        if ctx.handle is not None:
            weakref.finalize(ctx, function.module._kata_connection.free, ctx.handle)
        else:
            tracks = []
        frozen = [o for i, o in enumerate(outputs) if not (i < len(tracks) and tracks[i])]
        if frozen:
            ctx.mark_non_differentiable(*frozen)
        ctx.count = len(tensors)
        return outputs if len(outputs) != 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        if ctx.handle is None:
            return (None, None, None, None, *([None] * ctx.count))
        connection = ctx.function.module._kata_connection
        reply = connection.request(
            {
                "op": "backward",
                "handle": ctx.handle,
                "grads": [wire.plain(g) for g in grads],
                **recording(connection, ctx.test),
                "timeout": connection.left(),
            }
        )
        take_recorded(reply, ctx.function.called, ctx.test)
        found = list(reply.get("grads") or [])[: ctx.count]
        found += [None] * (ctx.count - len(found))
        return (None, None, None, None, *(g if type(g) is torch.Tensor else None for g in found))
