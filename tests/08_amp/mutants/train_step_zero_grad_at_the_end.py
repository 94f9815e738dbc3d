"""train_step zeroes the gradients after the step instead of before the forward: leftover gradients are summed in, and none are left to look at; breaks the loop's order (zero_grad first).

SGD then makes a momentum buffer for a parameter that had none: that failure must name its call and step, and the extra key alone (no empty list of missing ones), before the pitfall."""

EXPECT = (r"train_step\(model, sgd, .*, max_grad_norm=0\.05\), step 0 \(.*\): the optimizer state:\n"
          r"got keys not expected: \['momentum_buffer of parameter 3'\]\nThe gradients were cleared after the step")

import torch
def train_step(model, optimizer, scaler, inputs, targets, loss_fn, *, device_type="cpu", dtype=torch.bfloat16, max_grad_norm=None):
    with torch.autocast(device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
