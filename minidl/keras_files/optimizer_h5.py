"""An optimizer's state in Keras 3's layout: optimizer/vars/<i>.

Keras lists an optimizer's variables as: iterations, learning_rate (absent when it is a
schedule), the exponential moving averages (use_ema), then the slots each optimizer's
build() makes, one add_optimizer_variables call after another, a call's slots interleaved
per model variable (Adam: momentum_0, velocity_0, momentum_1, velocity_1, ...). minidl keeps
the same slots under the same names ("<slot>/<weight index>"); this module orders them as
Keras does. Optimizers whose Keras layout is not listed here are not written (Keras then
skips their state with a warning, as it does for any mismatch) and not read.
"""

import warnings

import numpy as np

from .. import schedules
from ..models.minidl_files import ModelFileError
from .state_walk import keras_variables
from .weights_h5 import _dataset, h5py

# minidl optimizer class -> Keras's add_optimizer_variables calls, in order
KERAS_SLOT_CALLS = {
    "SGD": [("momentum",)],
    "Adam": [("momentum", "velocity"), ("velocity_hat",)],
    "AdamW": [("momentum", "velocity"), ("velocity_hat",)],
    "RMSprop": [("velocity",), ("momentum",)],
    "Adagrad": [("accumulator",)],
    "Adadelta": [("accumulated_grad", "accumulated_delta_var")],
    "Lion": [("momentum",)],
    "Adamax": [("momentum", "norm")],
    "Nadam": [("momentum", "velocity")],
}
# scalars an optimizer's Keras build() makes after its slots (Nadam's running product of its
# momentum schedule, which minidl recomputes from the step count)
KERAS_TRAILING_SCALARS = {"Nadam": ("u_product",)}


def _keras_weight_order(model, orders=None):
    """[(minidl optimizer index, shape)] of the trainable weights in Keras's order (its
    model.layers order, which may differ from minidl's execution order)."""
    if not model.trainable:
        return []
    mine = model.graph.trainable_weights()
    index = {id(w): i for i, w in enumerate(mine)}
    keras = [w for w in keras_variables(model, orders) if id(w) in index]
    if sorted(id(w) for w in keras) != sorted(index):
        keras = mine                   # (not expected) fall back to minidl's order
    return [(index[id(w)], tuple(w.shape)) for w in keras]


def _layout(optimizer, weights):
    """[(minidl state key or 'iterations' / 'learning_rate', shape)] in Keras's order, or None
    when Keras's layout of this optimizer is not known."""
    calls = KERAS_SLOT_CALLS.get(type(optimizer).__name__)
    if calls is None:
        return None
    active = set(optimizer._active_slots())
    out = [("iterations", ())]
    if not isinstance(optimizer._learning_rate, schedules.LearningRateSchedule):
        out.append(("learning_rate", ()))
    for call in [("average",)] + calls:
        names = [slot for slot in call if slot in active]
        for index, shape in weights:
            out.extend((f"{slot}/{index}", shape) for slot in names)
    out.extend((name, ()) for name in KERAS_TRAILING_SCALARS.get(type(optimizer).__name__, ()))
    return out


def write_optimizer(f, model):
    """optimizer/vars/<i> of a compiled model's optimizer (built or not)."""
    optimizer = model.optimizer
    group = f.create_group("optimizer/vars")
    group.attrs["name"] = optimizer.name
    layout = _layout(optimizer, _keras_weight_order(model))
    if layout is None:
        return
    state = optimizer.get_state(model.backend)
    if not optimizer.built:   # Keras too lists only iterations and learning_rate then
        layout = [(key, shape) for key, shape in layout if key in ("iterations", "learning_rate")]
    for i, (key, shape) in enumerate(layout):
        if key == "learning_rate":
            value = np.asarray(optimizer.current_learning_rate(), dtype=np.float32)
        elif key == "iterations":
            value = np.asarray(state["iterations"], dtype=np.int64).reshape(())
        elif key == "u_product":   # Nadam: the product of u_s over the steps taken
            value = np.asarray(optimizer._u_product(int(state["iterations"])), dtype=np.float32)
        else:
            value = np.asarray(state[key], dtype=np.float32)
        group.create_dataset(str(i), data=value)


def read_optimizer(f, model, where, orders=None):
    """Restore the optimizer state a Keras file holds; a layout that does not match this
    optimizer is skipped with a warning (Keras does the same)."""
    optimizer = model.optimizer
    group = f.get("optimizer/vars")
    layout = _layout(optimizer, _keras_weight_order(model, orders))
    if not isinstance(group, h5py().Group) or layout is None:
        return
    count = len(group)
    if count <= 2:   # written before the optimizer's first step: iterations, learning rate
        layout = [(key, shape) for key, shape in layout if key in ("iterations", "learning_rate")]
    if count != len(layout) or set(group.keys()) != {str(i) for i in range(count)}:
        warnings.warn(f"{where}: skipping the optimizer state: the file holds {count} "
                      f"variables, {type(optimizer).__name__} has {len(layout)}", stacklevel=4)
        return
    # what the file does not hold (the slots, before Keras's first step) stays as it is
    state = dict(optimizer.get_state(model.backend))
    for i, (key, shape) in enumerate(layout):
        node = group[str(i)]
        if key == "iterations":
            value = _dataset(f, node, (), where, f"optimizer/vars/{i}")
            state[key] = np.asarray(int(value), dtype=np.int64)
        elif key == "u_product":   # recomputed from iterations; its shape is still checked
            _dataset(f, node, shape, where, f"optimizer/vars/{i}")
        elif key != "learning_rate":
            state[key] = _dataset(f, node, shape, where, f"optimizer/vars/{i}")
    try:
        optimizer.set_state(model.backend, state)
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
