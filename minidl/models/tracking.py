"""What a subclassed model (or a custom layer) holds: the layers and models set as its
attributes, alone or in lists, tuples and dicts, in the order they were set (Keras's
attribute tracking), and the computing layers under them.

Objects are told apart by what they have (a model has a `graph`, a layer written with
minidl.ops answers uses_call()), so that this module imports no model module.
"""

from ..layers.base import Layer


def _is_model(item):
    return hasattr(item, "graph") and hasattr(item, "compile")


def tracked_items(owner, skip=()):
    """The layers and models in owner's attributes, once each, in assignment order; lists,
    tuples and dict values are searched one level deep. `skip` holds objects to leave out."""
    found = []
    for value in vars(owner).values():
        if isinstance(value, dict):
            values = list(value.values())
        elif isinstance(value, (list, tuple)):
            values = list(value)
        else:
            values = [value]
        for item in values:
            if not (isinstance(item, Layer) or _is_model(item)) or item is owner:
                continue
            if any(item is s for s in skip) or any(item is f for f in found):
                continue
            found.append(item)
    return found


def leaf_layers(items):
    """The layers that compute, under `items` (layers and models): a built-in layer itself,
    a layer written with ops or a subclassed model replaced by what it holds, a functional
    model by its graph's layers; once each, in order."""
    out = []

    def visit(item):
        if _is_model(item):
            children = item.tracked_layers() if hasattr(item, "tracked_layers") else (
                item.graph.primitive_layers if item.graph is not None else [])
        elif item.uses_call() and item.sublayers():
            children = item.sublayers()
        else:
            if not any(item is o for o in out):
                out.append(item)
            return
        for child in children:
            visit(child)

    for item in items:
        visit(item)
    return out
