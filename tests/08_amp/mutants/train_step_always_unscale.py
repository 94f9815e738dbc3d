"""train_step always calls scaler.unscale_(optimizer), even without max_grad_norm (results are identical, the call sequence is not); breaks "it uses the scaler it is given, calling unscale_ only when it clips"."""

from typing import Any, Callable

import torch


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16,
               max_grad_norm=None) -> float:
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # step() would do it anyway
    if max_grad_norm is not None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
