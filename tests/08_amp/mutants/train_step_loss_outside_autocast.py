"""train_step computes the loss after the autocast block; breaks "the autocast dtype ... for the forward and the loss"."""

EXPECT = r"the model AND the loss"

import torch
def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16, max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type, dtype=dtype):
        out = model(inputs)
    loss = loss_fn(out, targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
