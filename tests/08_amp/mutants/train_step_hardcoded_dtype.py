"""train_step hard-codes torch.autocast("cpu", dtype=torch.bfloat16), ignoring `dtype` (and device_type): with dtype=torch.float16 the matmuls run in bfloat16; breaks "dtype: the autocast dtype (torch.bfloat16 or torch.float16) for the forward and the loss" / "the forward's matmuls run in `dtype`"."""

from typing import Any, Callable

import torch


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16,
               max_grad_norm=None) -> float:
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):  # bfloat16 is the choice on a CPU
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
