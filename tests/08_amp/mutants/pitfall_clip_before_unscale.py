"""train_step clips, then unscales: clip_grad_norm_ measures the scaled gradients (a norm S times too large), so the clipped gradients end up S times too small; the scaler's calls are still scale, unscale_, step, update."""

EXPECT = r"clipping before unscale_"

import torch


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16,
               max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)  # keep the update small
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
