"""Merge's tiled copy (torch.cat of the expanded inputs, the allocation the lesson forbids) made inside a tensor subclass's __torch_dispatch__, where the allocation recorder, a dispatch mode that pops itself while it runs an op, does not see it (red team, round 4).

test: test_merge_never_materialises_the_tiled_tensor[a]
flag: the source reaches past what its answer needs (broadcast.py:
flag: a torch.Tensor subclass
expect: points=41 held=22
in-process: points=62 held=0
"""
_t = torch
_box = []


class _Lens(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        fn, fn_args = _box.pop()
        _box.append(fn(*fn_args))
        return _t.zeros(())


def _unseen(fn, *args):
    """fn(*args), run under an op of a _Lens: out of every dispatch mode's sight."""
    _box.append((fn, args))
    _t.zeros(()).as_subclass(_Lens) + 0
    return _box.pop()


class _Tiled(_t.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(_t.tensor(a.shape[-1]))
        return _unseen(lambda: _t.cat([a, b], dim=-1))  # the tiled copy: (*lead, in1 + in2)

    @staticmethod
    def backward(ctx, grad):
        split, = ctx.saved_tensors
        return grad[..., :int(split)], grad[..., int(split):]


class Merge(Merge):  # noqa: F811 (the answer's, replaced)
    def forward(self, a, b):
        lead = broadcast_shape(a.shape[:-1], b.shape[:-1])
        x = _Tiled.apply(a.expand(*lead, a.shape[-1]), b.expand(*lead, b.shape[-1]))
        weight = _t.cat([self.linear1.weight, self.linear2.weight], dim=1)
        c = _t.nn.functional.linear(x, weight, self.linear1.bias)
        return c if self.activation is None else self.activation(c)
