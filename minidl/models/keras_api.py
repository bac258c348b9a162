"""The parts of Keras's Model API that are about access and compatibility, not training.

Model inherits KerasModelAPI for: weights / trainable_weights / non_trainable_weights,
inputs / outputs / input / output, get_layer(name=None, index=None), the Keras-only arguments of compile() and fit() that mean nothing here, and Keras 2's
fit_generator / evaluate_generator / predict_generator.

Keras-only arguments, accepted and checked but with no effect (minidl has no graph compiler,
runs one step per call and loads data in the training thread or the data iterator's own):
compile(run_eagerly=, steps_per_execution=, jit_compile=, auto_scale_loss=) and
fit(workers=, use_multiprocessing=, max_queue_size=).
"""

import warnings

import numpy as np

_warned = set()


def _bool(value, argument, owner):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {argument} must be True or False, got {value!r}")


def _int(value, argument, owner, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{owner}: {argument} must be an int >= {low}, got {value!r}")


def check_compile_extras(owner, run_eagerly, steps_per_execution, jit_compile, auto_scale_loss):
    """Validate compile()'s Keras-only arguments (they change nothing)."""
    _bool(run_eagerly, "run_eagerly", owner)
    _int(steps_per_execution, "steps_per_execution", owner, 1)
    if jit_compile != "auto":
        _bool(jit_compile, "jit_compile (True, False or 'auto')", owner)
    _bool(auto_scale_loss, "auto_scale_loss", owner)


def check_fit_extras(owner, workers, use_multiprocessing, max_queue_size):
    """Validate Keras 2 fit()'s data-loading arguments (they change nothing)."""
    _int(workers, "workers", owner, 0)
    _bool(use_multiprocessing, "use_multiprocessing", owner)
    _int(max_queue_size, "max_queue_size", owner, 1)


def _deprecated(old, new, stacklevel=3):
    """Warn once per process that Keras 2's Model.<old> is Model.<new> now."""
    if old not in _warned:
        _warned.add(old)
        warnings.warn(f"Model.{old} is deprecated (Keras 2); use Model.{new} with a data "
                      "iterator (minidl.data.ArrayIterator, or any object with len() and iter())",
                      DeprecationWarning, stacklevel=stacklevel)


class _Steps:
    """A Keras 2 generator (endless, no len()) seen as an iterator of `steps` batches per
    epoch: each epoch takes the next `steps` batches from the one shared generator."""

    def __init__(self, generator, steps, argument, owner):
        if steps is None:
            raise ValueError(f"{owner}: {argument} is required with a generator that has no "
                             "len() (Keras 2 semantics: how many batches make one epoch)")
        self.generator, self.steps = generator, steps

    def __len__(self):
        return self.steps

    def __iter__(self):
        for _ in range(self.steps):
            batch = next(self.generator)
            yield tuple(batch) if isinstance(batch, list) else batch


def _as_iterator(data, steps, argument, owner):
    if hasattr(data, "__next__") and not hasattr(data, "__len__"):
        return _Steps(data, steps, argument, owner)
    return data


def as_batch_iterator(data, steps, argument, owner):
    """fit / evaluate / predict's x when it is a Python generator (or any iterator without
    len()) of (x, y, sample_weight) batches, as Keras 3 takes one: `steps` batches of it
    make an epoch (minidl needs that count; Keras can run a finite one to its end)."""
    if hasattr(data, "__next__") and not hasattr(data, "__len__") and steps is None:
        raise ValueError(f"{owner}: x is a generator without len(); pass {argument} (how many "
                         "of its batches make one epoch)")
    return _as_iterator(data, steps, argument, owner)


def _structured(tensors, kind, keys):
    if kind == "dict":
        return dict(zip(keys, tensors))
    return list(tensors) if kind == "list" else tensors[0]


class KerasModelAPI:
    """Mixed into Model; relies on Model's graph, layers, describe() and loops."""

    # ------------------------------------------------------------ weights
    @property
    def weights(self):
        """Every Weight (name, shape, trainable, backend value) of every layer, in order."""
        return [w for layer in self._weighted_layers for w in layer.weights]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for layer in self._weighted_layers for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self):
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    # ------------------------------------------------------------ tensors
    def _graph_or_attribute_error(self, what):
        if self.graph is None:
            raise AttributeError(f"{self.describe()} has no {what} yet: it has not been built "
                                 "(start it with layers.Input(shape), or call build(input_shape) "
                                 "or fit() on data)")
        return self.graph

    @property
    def inputs(self):
        return list(self._graph_or_attribute_error("inputs").inputs)

    @property
    def outputs(self):
        return list(self._graph_or_attribute_error("outputs").outputs)

    @property
    def input(self):
        """The input tensor, or the list / dict of them, as the model was defined."""
        g = self._graph_or_attribute_error("input")
        return _structured(g.inputs, g.input_structure, g.input_keys)

    @property
    def output(self):
        g = self._graph_or_attribute_error("output")
        if g.output_nesting is not None:   # nested outputs, as given
            return g.output_nesting
        return _structured(g.outputs, g.output_structure, g.output_keys)

    @property
    def output_names(self):
        """Keras 3's: the name of the layer that makes each output, in model.outputs order
        (a layer of two outputs named twice)."""
        given = getattr(self, "_given_output_names", None)
        if given is not None:
            return given
        g = self._graph_or_attribute_error("output_names")
        return [g._producer_name(t) for t in g.outputs]

    @output_names.setter
    def output_names(self, names):
        self._given_output_names = list(names)

    def get_layer(self, name=None, index=None):
        """A layer by name or by position in model.layers (one of the two), as Keras."""
        layers = self.layers
        if name is not None and index is not None:
            raise ValueError(f"{self.describe()}.get_layer: provide only a layer name or a layer "
                             f"index, got name={name!r} and index={index!r}")
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
                raise TypeError(f"{self.describe()}.get_layer: index must be an int, got {index!r}")
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"{self.describe()}.get_layer: asked for the layer at index "
                                 f"{index} but the model has {len(layers)} layers")
            return layers[index]
        if name is None:
            raise ValueError(f"{self.describe()}.get_layer: provide a layer name or a layer index")
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"{self.describe()} has no layer named {name!r}; layers: "
                         f"{[l.name for l in layers]}")

    def to_json(self, **kwargs):
        """The architecture (no weights) as Keras 3's JSON; models.model_from_json reads it."""
        from .json_config import model_to_json
        return model_to_json(self, **kwargs)

    # --------------------------------------------------------- Keras 2 names
    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                      validation_data=None, validation_steps=None, validation_freq=1,
                      class_weight=None, max_queue_size=10, workers=1, use_multiprocessing=False,
                      shuffle=True, initial_epoch=0):
        """Keras 2's name for fit(generator, ...); warns once. A plain Python generator (no
        len()) needs steps_per_epoch, as in Keras 2."""
        _deprecated("fit_generator", "fit")
        owner = f"{self.describe()}.fit_generator"
        if class_weight is not None:
            raise ValueError(f"{owner}: class_weight is not supported")
        if validation_freq != 1:
            raise ValueError(f"{owner}: validation_freq other than 1 is not supported")
        train = _as_iterator(generator, steps_per_epoch, "steps_per_epoch", owner)
        if validation_data is not None and not isinstance(validation_data, (tuple, list)):
            validation_data = _as_iterator(validation_data, validation_steps, "validation_steps",
                                           owner)
        return self.fit(train, epochs=epochs, verbose=verbose, callbacks=callbacks,
                        validation_data=validation_data, shuffle=shuffle,
                        initial_epoch=initial_epoch, steps_per_epoch=steps_per_epoch,
                        workers=workers, use_multiprocessing=use_multiprocessing,
                        max_queue_size=max_queue_size)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        return self._generator_alias(self.evaluate, generator, steps, callbacks, verbose,
                                     (workers, use_multiprocessing, max_queue_size))

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        return self._generator_alias(self.predict, generator, steps, callbacks, verbose,
                                     (workers, use_multiprocessing, max_queue_size))

    def _generator_alias(self, method, generator, steps, callbacks, verbose, loading):
        """evaluate_generator / predict_generator: warn once, then call evaluate / predict."""
        new = method.__name__
        _deprecated(f"{new}_generator", new, stacklevel=4)
        owner = f"{self.describe()}.{new}_generator"
        check_fit_extras(owner, *loading)
        return method(_as_iterator(generator, steps, "steps", owner), steps=steps,
                      callbacks=callbacks, verbose=verbose)
