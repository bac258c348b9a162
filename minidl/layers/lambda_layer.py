"""layers.Lambda: a Python function of minidl.ops as a layer (Keras's Lambda).

The function runs like a custom layer's call (recorded in training, so gradients flow through
it). Saving stores the function's name only, never its code: loading needs the function in
custom_objects (or a custom_object_scope, or @register_keras_serializable).
"""

from ..custom_objects import get_registered_object
from .base import Layer


class Lambda(Layer):
    """Lambda(function, output_shape=None, arguments=None): function(inputs, **arguments)."""

    supports_masking = True   # passes its input's mask on (as Keras)

    def __init__(self, function, output_shape=None, mask=None, arguments=None, name=None,
                 trainable=True, dtype=None):
        super().__init__(name=name, trainable=trainable, dtype=dtype)
        if isinstance(function, str):
            found = get_registered_object(function)
            if found is None:
                raise ValueError(f"{self.describe()}: function {function!r} is not known; pass it "
                                 "in custom_objects when loading (minidl never stores code)")
            function = found
        if not callable(function):
            raise TypeError(f"{self.describe()}: function must be callable, got "
                            f"{type(function).__name__}")
        if arguments is not None and not isinstance(arguments, dict):
            raise TypeError(f"{self.describe()}: arguments must be a dict, got "
                            f"{type(arguments).__name__}")
        if mask is not None:
            raise ValueError(f"{self.describe()}: masks are not supported")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape_arg = (output_shape if output_shape is None or callable(output_shape)
                                  else tuple(output_shape))

    def call(self, inputs, training=None):
        return self.function(inputs, **self.arguments)

    def _build_keras_style(self, input_shape, eager=False):
        shape = self._output_shape_arg
        if shape is None:
            super()._build_keras_style(input_shape, eager)    # found by running the function
            return
        if callable(shape):   # Keras: a function of the input shape (batch axis included)
            with_batch = ([(None,) + tuple(s) for s in input_shape] if self.multiple_inputs
                          else (None,) + tuple(input_shape))
            self.output_shape = tuple(None if d is None else int(d)
                                      for d in tuple(shape(with_batch))[1:])
        else:                 # Keras: a shape without the batch axis
            self.output_shape = tuple(None if d is None else int(d) for d in shape)

    def get_config(self):
        name = getattr(self.function, "__name__", "")
        if name in ("", "<lambda>") or getattr(self.function, "__qualname__", name) != name:
            raise ValueError(f"{self.describe()}: a Lambda saves its function by name only (minidl "
                             "never stores code); use a named module-level function, not a "
                             f"lambda or a nested function (got {name or self.function!r}), and "
                             "pass it in custom_objects when loading")
        config = dict(super().get_config(), function=name, arguments=self.arguments)
        if self._output_shape_arg is not None:
            if callable(self._output_shape_arg):
                raise ValueError(f"{self.describe()}: an output_shape function cannot be saved; "
                                 "give output_shape as a tuple")
            config["output_shape"] = list(self._output_shape_arg)
        return config
