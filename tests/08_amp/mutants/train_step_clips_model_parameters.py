"""train_step clips model.parameters() (a parameter in no optimizer still holds a scaled gradient); breaks "the unscaled gradients of the optimizer's parameters are clipped"."""

EXPECT = r"clips model\.parameters\(\)"

import torch
def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16, max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
