"""evaluate moves the inputs to `device` but not the targets: on a GPU the comparison with the outputs raises."""

EXPECT = r"Move both tensors"

import torch


def _loss_and_accuracy(model, loader, loss_fn, device):
    total_loss, correct, total_samples = 0.0, 0, 0
    with torch.inference_mode():
        for inputs, targets in loader:
            outputs = model(inputs.to(device))
            total_loss += loss_fn(outputs, targets).item() * targets.shape[0]
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            total_samples += targets.shape[0]
    return total_loss / total_samples, correct / total_samples
