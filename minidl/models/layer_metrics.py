"""The Metric objects a model's layers own (layers/attribute_tracking.py): Keras 3 counts them
among model.metrics, after the compiled ones, resets them with the others and shows each
one's result in fit's and evaluate's logs under its name. The layers update them themselves
(a custom layer in its call, a larq quantizer's flip_ratio in training)."""


def owned_metrics(model):
    """Every Metric set as an attribute of `model`'s layers, of the layers nested in them (models,
    wrappers, a layer's own sublayers such as larq's quantizers), each once, in layer order."""
    from ..layers.base import Layer
    found, seen = [], set()

    def visit(layer):
        if id(layer) in seen:
            return
        seen.add(id(layer))
        for metric in layer.__dict__.get("_owned_metrics", ()):
            if not any(m is metric for m in found):
                found.append(metric)
        for value in list(layer.__dict__.values()):
            if isinstance(value, Layer):
                visit(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, Layer):
                        visit(item)

    for layer in getattr(model, "layers", []):
        visit(layer)
    return found
