"""evaluate runs the model with autograd on: every batch records a graph, and here all of them stay alive."""

EXPECT = r"with autograd on"


def evaluate(model, loader, loss_fn, device):
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        scored = [(model(x.to(device)), y.to(device)) for x, y in loader]
    finally:
        for module, training in modes:
            module.training = training
    n = sum(len(y) for _, y in scored)
    loss = sum(loss_fn(out, y).item() * len(y) for out, y in scored) / n
    return loss, sum((out.argmax(1) == y).sum().item() for out, y in scored) / n
