"""train_step converts the model to `dtype` before the forward: the matmuls run in 16 bits, but the weights (and so the optimizer's updates) are 16-bit too; breaks "The parameters are NOT converted"."""

EXPECT = r"must not convert the model"

import torch


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16,
               max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    model.to(dtype)  # run the forward in 16 bits
    with torch.autocast(device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
