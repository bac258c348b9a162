"""input_shape=, batch_input_shape= and input_dim= on any layer, as Keras accepts them.

Keras 2 scripts give the first layer of a Sequential its input shape this way
(`Conv2D(32, (3, 3), input_shape=x_train.shape[1:])`). Keras 3 still accepts input_shape and
input_dim on every layer and warns that it prefers an Input(shape) first; minidl does the
same, and also takes Keras 2's batch_input_shape (its batch axis is dropped: minidl's batch
size is free). The shape is kept as `layer._input_shape_arg` (without the batch axis), which
Sequential uses to create its input; a layer in a functional graph ignores it, as in Keras.

A metaclass takes these arguments off before the class's own __init__ runs, so no layer
constructor has to list them.
"""

import warnings

from ..arguments import int_tuple
from ..mixed_precision import layer_policy

_ARGUMENTS = ("input_shape", "batch_input_shape", "input_dim")
_WARNING = ("Do not pass an `input_shape`/`input_dim` argument to a layer. When using "
            "Sequential models, prefer using an `Input(shape)` object as the first layer in "
            "the model instead.")


def _shape_from(cls_name, given):
    (argument, value), = given.items()
    owner = cls_name
    if argument == "input_dim":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{owner}: input_dim must be a positive int, got {value!r}")
        return (int(value),)
    if argument == "batch_input_shape":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) < 2:
            raise ValueError(f"{owner}: batch_input_shape must be (batch, *shape), e.g. "
                             f"(None, 32, 32, 3), got {value!r}")
        batch = value[0]
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int)
                                  or batch <= 0):
            raise ValueError(f"{owner}: the batch size in batch_input_shape must be None or a "
                             f"positive int, got {value!r}")
        value = tuple(value)[1:]
    return sample_shape(value, f"{argument} (without the batch axis)", owner)


def sample_shape(value, argument, owner):
    """A shape without the batch axis: positive ints, None for a dimension known only from
    the data (Keras's Input(shape=(None, 16)))."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{owner}: {argument} must be a tuple of ints or None, got {value!r}")
    items = tuple(value)
    known = [d for d in items if d is not None]
    if len(known) == len(items):
        return int_tuple(items, argument, owner)
    if known:
        known = iter(int_tuple(known, argument, owner))
    return tuple(None if d is None else next(known) for d in items)


class LayerMeta(type):
    """Pops the input-shape arguments off a layer's constructor call (see module docstring).
    A class that takes the shape itself (InputLayer) names its argument in `_shape_argument`."""

    def __call__(cls, *args, **kwargs):
        # a layer whose own argument has one of these names (Embedding's input_dim) keeps it
        taken = [k for k in _ARGUMENTS if k not in getattr(cls, "_own_arguments", ())]
        given = {k: kwargs.pop(k) for k in taken if kwargs.get(k) is not None}
        for k in taken:
            kwargs.pop(k, None)
        if len(given) > 1:
            raise ValueError(f"{cls.__name__}: pass only one of input_shape, batch_input_shape "
                             f"and input_dim, got {sorted(given)}")
        shape = _shape_from(cls.__name__, given) if given else None
        target = getattr(cls, "_shape_argument", None)
        if shape is not None and target is not None:
            if kwargs.get(target) is not None or args:
                raise ValueError(f"{cls.__name__}: pass either {target} or "
                                 f"{next(iter(given))}, not both")
            kwargs[target] = shape
        elif shape is not None:
            warnings.warn(_WARNING, UserWarning, stacklevel=2)
        # dtype= is the layer's dtype policy (minidl.mixed_precision), for every layer but
        # InputLayer, whose dtype is its input's
        policy = None if getattr(cls, "_dtype_argument", False) else layer_policy(kwargs.pop("dtype", None))
        layer = super().__call__(*args, **kwargs)
        layer._input_shape_arg = shape
        layer._dtype_policy = policy
        return layer
