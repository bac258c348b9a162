"""keras.InputSpec: what a layer accepts, checked on every call on symbolic tensors.

A layer sets `self.input_spec` (one InputSpec, or a list: one per input) in __init__ or
build; Layer.add_node checks each call's shapes (batch axis included) against it with
Keras's messages. Imports nothing from minidl.
"""


class InputSpec:
    """What a layer accepts (keras.InputSpec): set `layer.input_spec` in __init__ and
    every call on symbolic tensors is checked against it, with Keras's messages."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = None if dtype is None else str(getattr(dtype, "name", dtype))
        if shape is not None:
            self.ndim = len(shape)
            self.shape = tuple(None if d is None else int(d) for d in shape)
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = dict(axes or {})
            self.axes = {int(k): v for k, v in axes.items()}
        except (ValueError, TypeError) as e:
            raise TypeError(f"InputSpec: axes must be a dict of integer axes, got {axes!r}") from e
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim is not None else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                                 f"value: {max_dim}")

    def __repr__(self):
        spec = [f"dtype={self.dtype}" if self.dtype else "",
                f"shape={self.shape}" if self.shape else "",
                f"ndim={self.ndim}" if self.ndim else "",
                f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                f"min_ndim={self.min_ndim}" if self.min_ndim else "",
                f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(x for x in spec if x)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def assert_input_compatibility(input_spec, shapes, layer_name):
    """Raise ValueError, as Keras words it, unless each input's shape (batch axis
    included) fits its spec. `input_spec` is one InputSpec or a list (one per input)."""
    specs = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    if len(specs) > 1 and len(shapes) != len(specs):
        raise ValueError(f"Layer '{layer_name}' expects {len(specs)} input(s), but it received "
                         f"{len(shapes)} input tensors.")
    for index, (spec, shape) in enumerate(zip(specs, shapes)):
        if spec is None:
            continue
        head = (f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible "
                f"with the layer:")
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise ValueError(f"{head} expected ndim={spec.ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(f"{head} expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(f"{head} expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None and spec.dtype != "float32":
            raise ValueError(f"{head} expected dtype={spec.dtype}, found dtype=float32")
        for axis, value in spec.axes.items():
            if value is not None and -ndim <= axis < ndim and shape[axis] not in (value, None):
                raise ValueError(f"{head} expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {shape}")
        if spec.shape is not None and len(spec.shape) == ndim:
            for want, got in zip(spec.shape, shape):
                if want is not None and got is not None and want != got:
                    raise ValueError(f"{head} expected shape={spec.shape}, found shape={shape}")
