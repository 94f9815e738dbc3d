"""evaluate turns autograd off with torch.set_grad_enabled(False) and never back on: the next training step records no graph."""

EXPECT = r"autograd is still off"

import torch


def evaluate(model, loader, loss_fn, device):
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    torch.set_grad_enabled(False)
    try:
        with torch.inference_mode():
            return _loss_and_accuracy(model, loader, loss_fn, device)  # noqa: F821
    finally:
        for module, training in modes:
            module.training = training
