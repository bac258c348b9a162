"""The data a train_step / test_step of your own receives, as Keras 3 hands it over.

When a model overrides train_step (or test_step), fit (or evaluate) does not check the data
against the model's inputs and outputs: x, y and sample_weight, each as given (one array, or
any nesting of lists, tuples and dicts of arrays; y and sample_weight may be absent), are cut
into batches, and each batch reaches the step as `x`, `(x, y)` or `(x, y, sample_weight)`
in the same nesting, its arrays as minidl.ops Tensors (checked in Keras 3.15.1's side venv:
floating arrays arrive as float32, integer ones as integers). A sample_weight given as one
array for a nested y is repeated for each of y's arrays, and class_weight becomes per-sample
weights of a one-array y, as Keras's data adapters do.

The loops keep their batch sources (batch_sources.py): the arrays go there as flat lists
(x's, y's and the weights' leaves, in minidl.tree order), and `pack` rebuilds the nesting of
each batch.
"""

from collections.abc import Mapping

import numpy as np

from .. import ops, tree
from ..string_tensors import StringTensor, is_string_array, string_batch


def _leaf(value, where):
    """One array of the data as the step takes it: float32 for any floating dtype (Keras's
    floatx), int32 for integers and booleans (minidl's integer dtype); an array of strings
    stays one (it reaches the step as a StringTensor, on the host: string_tensors.py)."""
    array = np.asarray(value)
    if is_string_array(array) and array.ndim > 0:
        return string_batch(array, where)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number)
                                     or array.dtype == bool):
        raise TypeError(f"{where}: expected numeric arrays, got dtype {array.dtype}")
    if np.iscomplexobj(array):
        raise TypeError(f"{where}: complex values (dtype {array.dtype}) are not supported")
    if array.ndim == 0:
        raise ValueError(f"{where}: expected a batch of samples, got a scalar")
    dtype = np.float32 if np.issubdtype(array.dtype, np.floating) else np.int32
    return np.ascontiguousarray(array, dtype=dtype)


def _flat(part, argument):
    """The leaves of one part (x, y or sample_weight) as arrays, in minidl.tree order."""
    leaves = tree.flatten(part)
    if not leaves:
        raise ValueError(f"{argument}: holds no arrays")
    if any(leaf is None for leaf in leaves):
        raise ValueError(f"{argument}: None inside {type(part).__name__}; give arrays only")
    return [_leaf(leaf, argument) for leaf in leaves]


def _class_weights(class_weight, y, owner):
    """Each sample's weight from class_weight ({class index: weight}) and a one-array y of
    class indices or one-hot rows (Keras: the argmax of a last axis of several classes)."""
    if not isinstance(class_weight, Mapping):
        raise TypeError(f"{owner}: class_weight must be a dict {{class index: weight}}, got "
                        f"{type(class_weight).__name__}")
    if tree.is_nested(y) or y is None:
        raise ValueError(f"{owner}: class_weight needs y to be one array of classes (as Keras); "
                         "pass sample_weight instead")
    y = np.asarray(y)
    classes = (y.argmax(-1) if y.ndim > 1 and y.shape[-1] > 1
               else np.rint(y.reshape(len(y), -1)[:, 0])).astype(np.int64)
    return np.array([float(class_weight.get(int(c), 1.0)) for c in classes], np.float32)


class StepArrays:
    """x, y and sample_weight of fit / evaluate for a step of your own: `xs`, `ys`, `sws` the
    flat lists of their arrays ([] for an absent y, None for absent weights) and `pack`,
    which gives a batch of those lists back its nesting."""

    def __init__(self, x, y, sample_weight, class_weight, owner, x_argument="x",
                 y_argument="y"):
        if x is None:
            raise ValueError(f"{owner}: {x_argument} is required")
        if sample_weight is not None and class_weight is not None:
            raise ValueError(f"{owner}: give sample_weight or class_weight, not both")
        if class_weight is not None:
            sample_weight = _class_weights(class_weight, y, owner)
        if sample_weight is not None and tree.is_nested(y) and not tree.is_nested(sample_weight):
            sample_weight = tree.map_structure(lambda _: sample_weight, y)
        self._parts = (x, y, sample_weight)
        self.xs = _flat(x, x_argument)
        self.ys = [] if y is None else _flat(y, y_argument)
        self.sws = None if sample_weight is None else _flat(sample_weight, "sample_weight")
        n = len(self.xs[0])
        for argument, arrays in ((x_argument, self.xs), (y_argument, self.ys),
                                 ("sample_weight", self.sws or [])):
            lengths = sorted({len(a) for a in arrays})
            if lengths and lengths != [n]:
                raise ValueError(f"{owner}: {x_argument} has {n} samples, {argument} holds "
                                 f"arrays of {lengths} samples: every array needs one row per "
                                 "sample")
        if n == 0:
            raise ValueError(f"{owner}: {x_argument} holds no samples")

    def pack(self, xs, ys, sws):
        """(x, y, sample_weight) of a batch, nested as given (y, sample_weight None when
        absent)."""
        x, y, sw = self._parts
        return (tree.pack_sequence_as(x, xs),
                None if y is None else tree.pack_sequence_as(y, ys),
                None if sw is None else tree.pack_sequence_as(sw, sws))

    def data(self, xs, ys, sws):
        """The validation data of these arrays as fit takes it: (x, y) or (x, y, weights)."""
        x, y, sw = self.pack(xs, ys, sws)
        return (x, y) if sw is None else (x, y, sw)


def iterator_batch(batch, owner):
    """(x, y, sample_weight) of a data iterator's batch for a step of your own: a tuple of 2
    or 3 is (x, y[, sample_weight]), anything else is x, as Keras unpacks it; the arrays as
    the step takes them."""
    if isinstance(batch, tuple) and len(batch) in (2, 3):
        parts = tuple(batch) + (None,) * (3 - len(batch))
    else:
        parts = (batch, None, None)
    return tuple(None if part is None else tree.pack_sequence_as(part, _flat(part, f"{owner}: a batch"))
                 for part in parts)


def first_rows(x):
    """The number of samples of a batch x (its first array's length)."""
    return len(tree.flatten(x)[0])


def as_step_data(x, y, sample_weight, backend):
    """The `data` a step receives: x, (x, y) or (x, y, sample_weight), each array a Tensor on
    `backend`."""
    def tensor(a):
        return StringTensor(a) if is_string_array(a) else ops.convert_to_tensor(a, backend=backend)

    def tensors(part):
        return tree.map_structure(tensor, part)
    if sample_weight is not None:
        return tensors(x), tensors(y), tensors(sample_weight)
    if y is not None:
        return tensors(x), tensors(y)
    return tensors(x)
