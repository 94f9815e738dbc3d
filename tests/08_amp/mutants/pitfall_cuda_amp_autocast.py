"""train_step uses torch.cuda.amp.autocast, from older tutorials: CUDA's autocast (deprecated), which leaves CPU tensors in float32, and disables itself with a warning where there is no CUDA."""

EXPECT = r"torch\.cuda\.amp\.autocast"

import torch


def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16,
               max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast(dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for group in optimizer.param_groups for p in group["params"]], max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
