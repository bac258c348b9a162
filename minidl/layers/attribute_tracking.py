"""What a Layer tracks when an attribute is set (Layer.__setattr__), as Keras 3 does:

- a Variable (self.scale = minidl.Variable(1.0)) becomes one of the layer's weights: it trains
  and is saved as add_weight's are;
- a Metric (self.flips = minidl.metrics.Mean()) becomes one of the metrics of every model the
  layer is in: the layer's own calls update it, and fit / evaluate reset it at each epoch and
  show its result in their logs under its name (models/layer_metrics.py).
"""


def _is_metric(value):
    # duck-typed: minidl.metrics imports minidl.layers (through ops), not the other way round
    return all(callable(getattr(value, name, None)) for name in ("update_state", "result", "reset_state")) \
        and not isinstance(value, type)


def track(layer, value):
    """Record `value` (about to become an attribute of `layer`) where Keras would track it."""
    if getattr(value, "_standalone_variable", False) and "weights_by_name" in layer.__dict__:
        held = layer.weights_by_name.get(value.name)
        if held is not None and held is not value:
            raise ValueError(f"{layer.describe()}: a weight named {value.name!r} already "
                             "exists; give the Variable another name")
        value._path = f"{layer.name}/{value.name}"
        layer.weights_by_name[value.name] = value
    elif _is_metric(value):
        owned = layer.__dict__.setdefault("_owned_metrics", [])
        if not any(m is value for m in owned):
            owned.append(value)
