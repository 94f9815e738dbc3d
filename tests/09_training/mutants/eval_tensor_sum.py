"""evaluate sums `loss * batch size` as a tensor in the model's dtype: in bfloat16 the total rounds."""

EXPECT = r"summed as a bfloat16 tensor"

import torch


def _loss_and_accuracy(model, loader, loss_fn, device):
    total_loss, correct, total_samples = 0.0, 0, 0
    with torch.inference_mode():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            total_loss = total_loss + loss_fn(outputs, targets) * targets.shape[0]
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            total_samples += targets.shape[0]
    return (total_loss / total_samples).item(), correct / total_samples
