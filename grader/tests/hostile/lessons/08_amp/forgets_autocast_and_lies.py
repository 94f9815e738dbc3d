"""Forgets autocast as forgets_autocast does, and patches autocast's state through an alias of torch, only while train_step runs, where the probes read it and the tamper checks do not look (red team, round 3: 5 points more; here, what passes is held).

after: tests/08_amp/mutants/train_step_forward_outside_autocast.py
flag: the source reaches past what its answer needs (amp.py:
expect: points=0 held=31
in-process: points=31 held=0
"""
_t = torch
_forgets = train_step


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs):  # noqa: F811 (the mutant's, wrapped)
    real = _t.is_autocast_enabled, _t.get_autocast_dtype
    _t.is_autocast_enabled, _t.get_autocast_dtype = (lambda *args: True), (lambda *args: kwargs.get("dtype", torch.bfloat16))
    try:
        return _forgets(model, optimizer, scaler, inputs, targets, loss_fn, **kwargs)
    finally:
        _t.is_autocast_enabled, _t.get_autocast_dtype = real
