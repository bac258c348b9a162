"""Layer base class and the Input layer (symbolic tensors and nodes: nodes.py).

A layer's life follows Neon's fixed lifecycle:

1. `__init__` stores hyperparameters (`get_config` returns exactly them);
2. `build(input_shape)` checks shapes and declares weights (shapes without the batch axis);
3. `attach(backend)` uploads the initial weights and allocates their gradients, once;
4. `forward(call, inputs, training)` / `backward(call, dout)` run every step on the context
   of one call (calls.py's LayerCall): what forward keeps for backward and the buffers it
   writes into (`call.buffer(role, shape)`: one storage per role, sized for the largest batch
   seen and viewed for smaller ones, see buffers.py, reused from step to step). Nothing of a
   call is kept on the layer, so one layer may be called any number of times.

A layer never computes with numpy: all math goes through `self.backend`.
"""

import functools
import math

import numpy as np

from .. import constraints, initializers, regularizers
from ..arguments import int_tuple
from ..mixed_precision import DTypePolicy
from ..naming import auto_name, snake_case
from ..string_tensors import STRING, refuse
from . import attribute_tracking
from .nodes import KerasTensor, Node, compatible, format_shape, has_unknown, several_shapes
from .weights import Weight
from . import added_losses, custom_call
from .input_arguments import LayerMeta, sample_shape
from .input_spec import assert_input_compatibility
from .variable_names import VariableNames
from .call_options import CallOptions


def _is_model(item):
    """A model (which a custom layer may hold and call like a layer); models import layers,
    so this checks by duck type, as models/tracking.py does."""
    return hasattr(item, "graph") and hasattr(item, "compile")


class Layer(VariableNames, CallOptions, metaclass=LayerMeta):
    """Base class of every layer (input_shape= and the like are taken by LayerMeta)."""

    # Layers whose forward takes a list of tensors (Add, Concatenate) set this.
    multiple_inputs = False
    # Layers that draw random numbers in training (Dropout) set this: before every training
    # step the model sets their `step_seed` from the model's (or their own `seed`), the
    # layer's position and the step count, so that a resumed run draws the same numbers.
    needs_step_seed = False
    _building = False   # set while build_once runs the layer's build (see _keras_build)
    # Masks (Keras's): a layer that supports_masking passes on the mask (N, steps) of its input
    # as compute_mask returns it; the model's graph gives each call its input's mask as
    # call.mask (None, or a float backend tensor of 1.0 for the steps kept; models/masks.py).
    supports_masking = False
    _unknown_dims = False   # built for a shape with an unknown (None) dimension

    def __init__(self, name=None, trainable=True, dtype=None, activity_regularizer=None):
        if dtype is not None and not _is_float32(dtype):
            raise TypeError(f"{type(self).__name__}: dtype must be 'float32' (or None), the one "
                            f"dtype minidl layers compute in; got {dtype!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        self.name = name or auto_name(snake_case(type(self).__name__))
        self.trainable = trainable
        # Keras's activity regularizer: its penalty of the layer's output, divided by the batch
        # size, joins the loss once per call; the model's graph keeps each call's output and
        # adds the gradient to its dout (models/graph.py).
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.built = False
        self.backend = None
        self.input_shape = None
        self.output_shape = None
        self.weights_by_name = {}
        self._inbound_nodes = []   # one Node per call on symbolic tensors (see Node)
        # the contexts of the layer's calls on Tensors within a scope (eager_calls.py)
        self._eager_calls = []

    def __setattr__(self, name, value):
        attribute_tracking.track(self, value)   # Variables and Metrics, as Keras tracks them
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------ config
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable}
        if self._dtype_policy is not None:
            config["dtype"] = self._dtype_policy.name   # a mixed policy (minidl.mixed_precision)
        return config

    _dtype_policy = None   # set by LayerMeta: None for float32, else a mixed DTypePolicy

    @property
    def dtype_policy(self):
        return self._dtype_policy or DTypePolicy("float32")

    @property
    def compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    def _set_weight_options(self, kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                            bias_constraint=None):
        """Keras's kernel/bias regularizer and constraint arguments (names, instances or dicts),
        for layers with a kernel and a bias; build() hands them to add_weight."""
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _weight_options_config(self):
        return {"kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def describe(self):
        """'Dense 'dense_2'': how messages name this layer."""
        return f"{type(self).__name__} {self.name!r}"

    # ------------------------------------------------------------ graph
    @property
    def inbound(self):
        """The tensors of this layer's first call (as Keras's layer.input)."""
        return self._inbound_nodes[0].inputs if self._inbound_nodes else []

    @property
    def input(self):
        """The input of this layer's first call: a tensor, or a list for a merge layer."""
        if not self._inbound_nodes:
            raise AttributeError(f"{self.describe()} has not been called on a tensor yet")
        node = self._inbound_nodes[0]
        return list(node.inputs) if node.structured else node.inputs[0]

    @property
    def output(self):
        """The output of this layer's first call (as Keras 3's layer.output), or None."""
        if not self._inbound_nodes:
            return None
        node = self._inbound_nodes[0]
        # a call of several outputs (return_state, a list from call): all of them, as Keras
        return list(node.outputs) if node.several else node.outputs[0]

    def __call__(self, inputs, *args, training=None, **options):
        """On symbolic tensors: a new call node and its output tensor. On arrays (eager
        use, as Keras 3 outside a model): the result as a numpy array. On minidl.ops
        Tensors (inside another layer's call): the result as a Tensor, recorded in training.

        options: the call's other keyword arguments (plain values, such as attention's
        use_causal_mask, or those a custom layer's `call` takes); they belong to this one call
        (its node, or its eager context), so two calls of a layer may differ in them. A layer
        written with `call` also takes further tensors, positional or by keyword, as Keras
        does (`layer(logits, targets)`, `call(self, x, targets=None)`): they join the node's
        inputs and reach `call` by their names (custom_call.pack_tensor_arguments)."""
        if args:
            if self.uses_call():
                options, training = custom_call.bind_positional(self, args, options, training)
            elif len(args) == 1:   # layer(x, True): Keras's positional training
                training = args[0]
            else:
                raise TypeError(f"{self.describe()}: takes its inputs and training, got "
                                f"{len(args) + 1} positional arguments")
        if self.uses_call():
            inputs, options = custom_call.pack_tensor_arguments(self, inputs, options)
        options = self.check_call_options(options)
        if custom_call.is_eager(inputs):
            return custom_call.call_eagerly(self, inputs, training, options)
        if self.uses_call():
            self.multiple_inputs = isinstance(inputs, (list, tuple))
        tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not any(isinstance(t, KerasTensor) for t in tensors):
            return eager_call(self, inputs, training, options)
        for t in tensors:
            if not isinstance(t, KerasTensor):
                raise TypeError(f"{self.describe()} must be called on the output of Input() or "
                                f"another layer, got {type(t).__name__}")
        if self.multiple_inputs != isinstance(inputs, (list, tuple)):
            kind = "a list of tensors" if self.multiple_inputs else "a single tensor"
            raise TypeError(f"{self.describe()} must be called on {kind}")
        outputs = self.add_node(tensors, training, options=options).outputs
        return outputs if len(outputs) > 1 else outputs[0]


    def add_node(self, tensors, training=None, parent=None, options=None):
        """Build for the tensors' shapes (once) and record a call node on them."""
        shapes = [t.sample_shape for t in tensors]
        shape = shapes if self.multiple_inputs else shapes[0]
        self._check_string_inputs(tensors)
        if getattr(self, "input_spec", None) is not None:   # Keras's InputSpec check
            main = custom_call.main_shapes(self, shape) if self.uses_call() else shape
            main = main if isinstance(main, list) else [main]
            assert_input_compatibility(self.input_spec, [(None,) + tuple(s) for s in main], self.name)
        if self.uses_call() and custom_call.takes_mask(self):
            # its call gets the input's mask; the probe of its output shape passes one too
            self._input_masked = custom_call.carries_mask(tensors[0])
        self.build_once(shape)
        if getattr(self, "_batch_axis_dropped", None):
            raise ValueError(self._batch_axis_dropped)
        # a layer built with unknown dims and called again on known ones (or the reverse)
        out = None if shape == self.input_shape and not options else \
            self.node_output_shape(shape, options)
        node = Node(self, tensors, self.multiple_inputs, training, parent, out, options)
        for t, dtype in zip(node.outputs, self.node_output_dtypes(tensors)):
            t.dtype = dtype
        return node

    def takes_strings(self):
        """Whether a string tensor may be this layer's input: a layer written with call may
        pass it to the string layers it calls (its shape probe tells); the built-in layers
        compute on numbers (the string preprocessing layers say otherwise)."""
        return self.uses_call()

    def _check_string_inputs(self, tensors):
        # which inputs are strings: a probe of a custom call's shape passes StringTensors there
        self._string_inputs = [getattr(t, "dtype", None) == STRING for t in tensors]
        for position, t in enumerate(tensors):
            if getattr(t, "dtype", None) == STRING and not self.takes_strings():
                which = "its input" if len(tensors) == 1 else f"its input {position}"
                raise refuse(f"{which} {t.name!r} {format_shape(t.sample_shape)}",
                             f"{self.describe()} computes on numbers")

    def node_output_dtypes(self, tensors):
        """The dtypes of a new node's outputs (by default float32, the class default; the
        host preprocessing layers give theirs)."""
        return ()

    def build_once(self, input_shape, eager=False):
        """Build for one sample's shape (no batch axis), once. A layer built with unknown
        (None) dims takes any shape that fits them, as in Keras. eager: built by a call on
        arrays or tensors, where a call of your own may drop the batch axis (as in Keras)."""
        if self.built:
            if input_shape != self.input_shape and not self._fits(input_shape):
                raise ValueError(f"{self.describe()} was built for input shape "
                                 f"{self._shape_text(self.input_shape)}, got "
                                 f"{self._shape_text(input_shape)}")
            return
        self.input_shape = input_shape
        # layers whose forward reads fixed shapes take their per-batch path when this is set
        self._unknown_dims = has_unknown(input_shape)
        self._building = True
        try:
            if self.uses_call():
                self._build_keras_style(input_shape, eager)
            else:
                self.build(input_shape)
                self.output_shape = tuple(self.compute_output_shape(input_shape))
        finally:
            self._building = False
        self.built = True

    def _fits(self, input_shape):
        if not self.multiple_inputs:
            return compatible(input_shape, self.input_shape)
        return len(input_shape) == len(self.input_shape) and all(
            compatible(s, d) for s, d in zip(input_shape, self.input_shape))

    def concrete_output_shape(self, input_shape):
        """The output shape for inputs of `input_shape` (one sample, possibly more known than
        the shape the layer was built for): the model resolves a batch's shapes with it."""
        if input_shape == self.input_shape:
            return self.output_shape
        if not self.uses_call() or _built_in(type(self), "compute_output_shape"):
            return tuple(self.compute_output_shape(input_shape))
        if type(self).compute_output_shape is not Layer.compute_output_shape:
            main = custom_call.main_shapes(self, input_shape)
            with_batch = ([(None,) + tuple(s) for s in main] if isinstance(main, list)
                          else (None,) + tuple(main))
            return _without_batch(self.compute_output_shape(with_batch))
        return _as_shape(custom_call.infer_output_shape(self, input_shape))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _keras_build(cls.__dict__["build"])

    def uses_call(self):
        """True for layers written with minidl.ops: a subclass that defines call."""
        return type(self).call is not Layer.call

    def _build_keras_style(self, input_shape, eager=False):
        # Keras passes shapes with the batch axis to build and compute_output_shape, those of
        # the call's inputs (not of its further tensor arguments)
        input_shape = custom_call.main_shapes(self, input_shape)
        with_batch = ([(None,) + tuple(s) for s in input_shape]
                      if isinstance(input_shape, list) else (None,) + tuple(input_shape))
        # a built-in layer subclassed with a call of its own (a Conv2D whose call standardizes
        # the kernel) keeps its built-in build and shapes, which take one sample's shape
        self.build(input_shape if _built_in(type(self), "build") else with_batch)
        if _built_in(type(self), "compute_output_shape"):
            self.output_shape = tuple(self.compute_output_shape(input_shape))
        elif type(self).compute_output_shape is not Layer.compute_output_shape:
            self.output_shape = _without_batch(self.compute_output_shape(with_batch))
        else:
            try:
                self.output_shape = _as_shape(custom_call.infer_output_shape(self, self.input_shape))
            except custom_call.BatchAxisDropped as exc:
                if not eager:
                    raise
                # no output shape per sample: eager calls run; a model's node says why not
                self.output_shape, self._batch_axis_dropped = None, str(exc)

    def call(self, inputs, training=None, mask=None):
        """The layer's computation with minidl.ops (Keras subclassing); built-in layers
        implement forward/backward instead."""
        raise NotImplementedError

    def _shape_text(self, shape):
        if self.multiple_inputs:
            return "[" + ", ".join(format_shape(s) for s in shape) + "]"
        return format_shape(shape)

    def build(self, input_shape):
        """Check the input shape and declare weights. Called by user code, input_shape
        includes the batch axis as in Keras 3 (`layer.build((None, 4))`); the built-in
        layers' build methods receive one sample's shape (see _keras_build), a layer
        written with call() the shape with its batch axis (_build_keras_style)."""

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_mask(self, inputs, mask=None):
        """The mask of the output for `inputs` with `mask` (backend tensors): by default the
        input's mask, unchanged (a layer that keeps the steps)."""
        return mask

    def output_mask(self, call, inputs, mask):
        """The output's mask of the call `call`, after its forward (models/graph.py asks):
        compute_mask's by default; built-in layers that make a mask write it into the call's
        buffers, so that each call of a shared layer keeps its own."""
        return self.compute_mask(inputs, mask)

    def output_has_mask(self, input_masked):
        """Whether the output has a mask when the input has one (input_masked: a bool, a list
        of them for several inputs); models/graph.py plans the losses with it. Layers that
        make a mask (Embedding, Masking) or drop it (GlobalAveragePooling1D) say so."""
        if isinstance(input_masked, list):
            return self.supports_masking and all(input_masked)
        return self.supports_masking and input_masked

    def node_output_shape(self, input_shape, options):
        """The output shape of one call on inputs of `input_shape` with its keyword options."""
        if options and self.uses_call() and \
                type(self).compute_output_shape is Layer.compute_output_shape:
            # a custom call's keyword arguments may change its output (return_sequences=)
            return _as_shape(custom_call.infer_output_shape(self, input_shape, options=options))
        if options and not self.uses_call():
            found = self.options_output_shape(input_shape, options)
            if found is not None:
                return found
        return self.concrete_output_shape(input_shape)

    def add_loss(self, loss):
        """Keras's add_loss: inside `call`, a scalar (or values summed to one) that joins the
        loss the model minimizes and reports (layers/added_losses.py)."""
        added_losses.add(self, loss)

    @property
    def losses(self):
        """Keras's layer.losses: what the last call added with add_loss (the layers called
        inside it included), then the penalty of each regularized weight."""
        found = list(getattr(self, "_last_losses", None) or getattr(self, "_eager_losses", None) or [])
        for weight in self.weights:
            if weight.regularizer is not None and weight.value is not None:
                found.append(weight.regularizer(weight))
        return found

    def expect_rank(self, input_shape, rank, what):
        if len(input_shape) != rank:
            raise ValueError(f"{self.describe()} expects {what} inputs of rank {rank + 1} "
                             f"(batch included), got shape {format_shape(input_shape)}")

    # ----------------------------------------------------------- weights
    def add_weight(self, name=None, shape=None, initializer=None, trainable=True,
                   regularizer=None, dtype=None, constraint=None):
        """A new weight (Keras's add_weight; keywords or minidl's (name, shape, initializer)
        order). Shapes have no batch axis; the initializer defaults to glorot_uniform. A
        regularizer's penalty joins the loss; a constraint is applied after every update."""
        if isinstance(name, (tuple, list)):   # Keras's positional order: shape first
            name, shape = shape if isinstance(shape, str) else None, name
        if shape is None:
            raise ValueError(f"{self.describe()}.add_weight: shape is required")
        if dtype is not None and not _is_float32(dtype):
            raise TypeError(f"{self.describe()}.add_weight: dtype must be float32, got {dtype!r}")
        name = name or f"variable_{len(self.weights_by_name)}"
        if isinstance(shape, (tuple, list)) and None in shape:
            # as Keras: a weight's size cannot come from an unknown (None) input dimension
            raise ValueError(f"{self.describe()}: weight {name!r} would have shape "
                             f"{tuple(shape)}; its size needs a known input dimension, the "
                             f"input shape is {self._shape_text(self.input_shape)}")
        if name in self.weights_by_name:
            raise ValueError(f"{self.describe()}: a weight named {name!r} already exists")
        shape = int_tuple(shape, "shape", f"{self.describe()}.add_weight") if shape != () else ()
        weight = Weight(name, shape, initializers.get(initializer or "glorot_uniform"),
                        bool(trainable), regularizers.get(regularizer), constraints.get(constraint))
        weight._path = f"{self.name}/{name}"   # Keras 3's variable.path
        self.weights_by_name[name] = weight
        return weight

    @property
    def weights(self):
        own = list(self.weights_by_name.values())
        if not self.uses_call():
            return own
        return own + [w for sub in self.sublayers() for w in sub.weights]

    @property
    def trainable_weights(self):
        own = [w for w in self.weights_by_name.values() if w.trainable and self.trainable]
        if not self.uses_call() or not self.trainable:
            return own
        return own + [w for sub in self.sublayers() for w in sub.trainable_weights]

    def sublayers(self):
        """The layers a custom layer holds in its attributes (its building blocks, called in
        its call), in the order they were set; their weights count as this layer's."""
        found = []
        for value in vars(self).values():
            for item in (value if isinstance(value, (list, tuple)) else (value,)):
                if (isinstance(item, Layer) or _is_model(item)) and item is not self \
                        and all(item is not f for f in found):
                    found.append(item)
        return found

    @property
    def non_trainable_weights(self):
        trainable = self.trainable_weights
        return [w for w in self.weights if not any(w is t for t in trainable)]

    def count_params(self):
        return int(sum(np.prod(w.shape) for w in self.weights))

    def attach(self, backend, initial_values=None):
        """Upload initial weights to `backend` and allocate gradients (once per model)."""
        self.backend = backend
        for sub in self.sublayers() if self.uses_call() else ():
            if not _is_model(sub):
                sub.attach(backend)
            elif sub.graph is not None:          # a model held by the layer (a Sequential)
                sub.graph.attach(backend)
            elif hasattr(sub, "_call_layer"):    # a subclassed model not built yet
                sub._call_layer.attach(backend)
        for w in self.weights_by_name.values():
            value = w.initializer(w.shape)
            w.value = backend.from_numpy(np.asarray(value))
            w.backend = backend
            w.grad = backend.zeros(w.shape) if w.trainable else None

    def get_weights(self):
        return [self.backend.to_numpy(w.value) if self.backend else None for w in self.weights]

    def set_weights(self, values):
        self.assign_weights(self.check_weights(values))

    def check_weights(self, values, weights=None):
        """`values` converted to the backend's dtype, once each is known to fit its weight
        (shape, and finite after the conversion: 1e300 becomes inf in float32). `weights`:
        some of the layer's (a custom layer's own, without its sublayers'), else all."""
        weights = self.weights if weights is None else weights
        if len(values) != len(weights):
            raise ValueError(f"{self.describe()} has {len(weights)} weights "
                             f"({[w.name for w in weights]}), got {len(values)} arrays")
        dtype = getattr(self.backend, "dtype", "float32")
        converted = []
        for w, v in zip(weights, values):
            v = np.asarray(v)
            if tuple(v.shape) != w.shape:
                raise ValueError(f"{self.describe()}: weight {w.name!r} has shape {w.shape}, "
                                 f"got an array of shape {tuple(v.shape)}")
            if v.dtype.kind not in "biuf":
                raise ValueError(f"{self.describe()}: weight {w.name!r} must be numbers, got "
                                 f"dtype {v.dtype}")
            with np.errstate(over="ignore"):
                v = np.ascontiguousarray(v, dtype=dtype)
            if not np.all(np.isfinite(v)):
                raise ValueError(f"{self.describe()}: weight {w.name!r} has values that are not "
                                 f"finite in {dtype}")
            converted.append(v)
        return converted

    def assign_weights(self, arrays, weights=None):
        """Copy arrays that check_weights returned into the weights (those given, else all)."""
        for w, v in zip(self.weights if weights is None else weights, arrays):
            self.backend.copy_from_host(w.value, v)

    # ------------------------------------------------------ batch shapes
    def batch_output_shape(self, call, x):
        """The output shape, batch axis included, for forward's input x: from the built shape,
        or with unknown (None) dims from x's (kept on the call for batch_input_shape)."""
        b = self.backend
        if not self._unknown_dims:
            return (b.shape(x)[0],) + self.output_shape
        shape = call.x_shape = b.shape(x)
        return (shape[0],) + tuple(self.compute_output_shape(shape[1:]))

    def batch_input_shape(self, call, dout):
        """The input shape, batch axis included, of the batch whose dL/doutput is dout."""
        if self._unknown_dims:
            return call.x_shape
        return (self.backend.shape(dout)[0],) + self.input_shape

    # --------------------------------------------------------- compute
    def forward(self, call, inputs, training):
        """Return the output tensor for `inputs` (a tensor, or a list for merge layers); what
        backward needs is kept on `call`, this call's LayerCall (layers/calls.py)."""
        if not self.uses_call():
            raise NotImplementedError(f"{self.describe()} defines neither call nor forward")
        return self.own_call_forward(call, inputs, training)

    def backward(self, call, dout):
        """Given dL/doutput of the call `call`, write the weight gradients into
        call.grad(weight) and return dL/dinput (a list for merge layers)."""
        if not self.uses_call():
            raise NotImplementedError(f"{self.describe()} defines neither call nor backward")
        return self.own_call_backward(call, dout)

    # A layer with a call of its own runs it through these (on its tape, custom_call.py),
    # also where a built-in parent class defines forward / backward (calls.run_forward).
    def own_call_forward(self, call, inputs, training):
        return custom_call.call_forward(self, call, inputs, training)

    def own_call_backward(self, call, dout):
        return custom_call.call_backward(self, call, dout)

    # What a training graph may reuse (models/graph.py): an output that neither the layer's
    # own backward nor any reader's backward reads is lent for the forward pass only. A layer
    # that overrides backward keeps these answers true for it.
    def backward_reads_input(self):
        """Whether backward reads the input of forward (False also promises that the output
        never shares the input's storage)."""
        return True

    def backward_reads_output(self):
        """Whether backward reads the output forward returned (or its pre-activation)."""
        return True


def _as_shape(shape):
    """A sample shape as a tuple, or a list of them for a layer of several outputs."""
    if several_shapes(shape):
        return [tuple(s) for s in shape]
    return tuple(shape)


def _without_batch(shape):
    """The sample shape(s) of what a Keras-style compute_output_shape returned (batch first)."""
    if several_shapes(shape):
        return [_without_batch(s) for s in shape]
    return tuple(None if d is None else int(d) for d in tuple(shape)[1:])


def _built_in(cls, method):
    """Whether `cls` inherits `method` from one of minidl's built-in layers (those computing
    with forward/backward), whose build and compute_output_shape take one sample's shape."""
    for klass in cls.__mro__:
        if method in klass.__dict__:
            return (klass is not Layer and klass.__module__.startswith("minidl.")
                    and klass.forward is not Layer.forward)
    return False


def _keras_build(build):
    """`build` as Keras 3 code calls it: from outside build_once the shape has its batch
    axis, which is dropped; the layer is then built (weights on the active backend, so that
    get_weights / set_weights work, as after Keras's build). Inside build_once (and a
    subclass's super().build) the layer's own code runs on the sample shape."""
    @functools.wraps(build)
    def keras_build(self, input_shape):
        if self._building:
            return build(self, input_shape)
        sample = _without_batch_axis(self, input_shape)
        self.build_once(sample)
        if self.backend is None:
            from ..backends import get_backend
            self.attach(get_backend())
    return keras_build


def _without_batch_axis(layer, input_shape):
    shapes = input_shape if layer.multiple_inputs else [input_shape]
    if (layer.multiple_inputs and not isinstance(input_shape, (list, tuple))) or any(
            not isinstance(s, (list, tuple)) or len(s) < 2 for s in shapes):
        what = "a list of shapes" if layer.multiple_inputs else "a shape"
        raise ValueError(f"{layer.describe()}: build(input_shape) takes {what} with the batch "
                         f"axis first, e.g. (None, 4), got {input_shape!r}")
    samples = [sample_shape(tuple(s)[1:], "input_shape (after the batch axis)", layer.describe())
               for s in shapes]
    return samples if layer.multiple_inputs else samples[0]


Layer.build = _keras_build(Layer.build)


def _is_integer(dtype):
    try:
        return np.dtype(dtype).kind in "iu"
    except TypeError:
        return False


def _is_float32(dtype):
    try:
        return np.dtype(dtype) == np.float32
    except TypeError:
        return False


def eager_call(layer, inputs, training, options=None, mask=None):
    """layer(array): build for the array's shape, put the weights on the active backend on
    first use, and return the forward result as a numpy array (a list of arrays for a merge
    layer's inputs). mask: the input's Keras mask passed by hand (an array), or None."""
    from ..backends import get_backend
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in arrays]
    if any(a.ndim < 1 for a in arrays):
        raise ValueError(f"{layer.describe()}: an eager call needs batches (batch axis first), "
                         f"got shapes {[a.shape for a in arrays]}")
    shapes = [a.shape[1:] for a in arrays]
    layer.build_once(shapes if layer.multiple_inputs else shapes[0], eager=True)
    if layer.backend is None:
        layer.attach(get_backend())
    from . import eager_calls
    b = layer.backend
    xs = [b.from_numpy(a) for a in arrays]
    if mask is not None:
        mask = b.from_numpy(np.ascontiguousarray(custom_call.ops.convert_to_numpy(mask),
                                                 dtype=np.float32))
    out, _ = eager_calls.forward(layer, xs if layer.multiple_inputs else xs[0], bool(training),
                                 b, False, options, mask)
    return [b.to_numpy(o) for o in out] if isinstance(out, list) else b.to_numpy(out)


def count_elements(shape):
    return math.prod(shape)


__all__ = ["Layer", "KerasTensor", "Node", "Weight", "format_shape"]


