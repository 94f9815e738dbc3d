"""Evaluates under torch.no_grad() instead of torch.inference_mode(); breaks "Runs in eval mode ... under torch.inference_mode() (no graph)"."""

EXPECT = r"under torch\.no_grad\(\)"

import torch


def evaluate(model, loader, loss_fn, device):
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        total_loss, correct, total_samples = 0.0, 0, 0
        with torch.no_grad():
            for inputs, targets in loader:
                inputs, targets = inputs.to(device), targets.to(device)
                outputs = model(inputs)
                batch_size = targets.shape[0]
                total_loss += loss_fn(outputs, targets).item() * batch_size
                correct += (outputs.argmax(dim=1) == targets).sum().item()
                total_samples += batch_size
        return total_loss / total_samples, correct / total_samples
    finally:
        for module, training in modes:
            module.training = training
