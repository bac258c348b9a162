"""keras.layers.Wrapper, the base of layers that take another layer, and SpectralNormalization,
a wrapper written with minidl.ops (its `call` runs on the backend through Tensors, like a
user's custom layer)."""

from .. import ops
from ..custom_objects import get_registered_object
from .base import Layer
from .wrappers import _layer_classes


class Wrapper(Layer):
    """Keras Wrapper: holds `layer` (built from the wrapper's input shape if it is not built
    yet); get_config / from_config carry the wrapped layer's config. Subclass it and write
    `call`, as in Keras."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer!r} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            shape = tuple(input_shape)[1:] if input_shape is not None else None
            self.layer.build_once(shape)

    def get_config(self):
        return dict(super().get_config(),
                    layer={"class_name": type(self.layer).__name__, "config": self.layer.get_config()})

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        spec = config.pop("layer")
        if not isinstance(spec, dict) or "class_name" not in spec:
            raise ValueError(f"{cls.__name__}.from_config: 'layer' must be a layer config "
                             f"{{'class_name', 'config'}}, got {spec!r:.100}")
        layer_cls = get_registered_object(spec["class_name"], custom_objects, _layer_classes())
        if layer_cls is None:
            raise ValueError(f"{cls.__name__}.from_config: unknown layer class "
                             f"{spec['class_name']!r}")
        return cls(layer_cls.from_config(spec.get("config", {})), **config)


class SpectralNormalization(Wrapper):
    """Keras SpectralNormalization: before each training call, `power_iterations` steps of the
    power method estimate the largest singular value sigma of the wrapped layer's kernel (or
    embeddings) reshaped to (-1, last axis), and the kernel is divided by it in place; the
    estimate's vector u (1, last axis) is a non-trainable weight "vector_u" carried from step
    to step. Inference uses the kernel as it is."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if isinstance(power_iterations, bool) or not isinstance(power_iterations, int) \
                or power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape):
        super().build(input_shape)
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        self._kernel_shape = tuple(kernel.shape)
        self.vector_u = self.add_weight(shape=(1, self._kernel_shape[-1]),
                                        initializer=_truncated_normal_002(),
                                        trainable=False, name="vector_u")

    def _kernel(self):
        kernel = getattr(self.layer, "kernel", None)
        return kernel if kernel is not None else self.layer.embeddings

    def call(self, inputs, training=False):
        if training:
            # An all-zero kernel has no singular direction: keep it and u as they are, as Keras
            # does. The choice is made on the device, so a training step reads nothing back.
            kernel = self._kernel()
            nonzero = ops.any(ops.not_equal(kernel, 0.0))
            u, normalized = self.normalized_weights()
            self.vector_u.assign(ops.where(nonzero, u, self.vector_u))
            kernel.assign(ops.where(nonzero, normalized, kernel))
        return self.layer(inputs)

    def normalized_weights(self):
        """(u, kernel / sigma) after power_iterations steps from the current u."""
        kernel = self._kernel()
        weights = ops.reshape(kernel, (-1, self._kernel_shape[-1]))
        u = ops.convert_to_tensor(self.vector_u)
        for _ in range(self.power_iterations):
            v = _normalize(ops.matmul(u, ops.transpose(weights)))
            u = _normalize(ops.matmul(v, weights))
        u, v = ops.stop_gradient(u), ops.stop_gradient(v)
        sigma = ops.matmul(ops.matmul(v, weights), ops.transpose(u))
        return u, ops.reshape(ops.divide(weights, sigma), self._kernel_shape)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(self.layer.concrete_output_shape(tuple(input_shape)[1:]))

    def get_config(self):
        return dict(super().get_config(), power_iterations=self.power_iterations)


def _normalize(x):
    """x / ||x|| over all its entries, as Keras's ops.nn.normalize(axis=None) computes it:
    x * min(rsqrt(sum x^2), 1 / epsilon), epsilon 1e-7."""
    return ops.multiply(x, ops.minimum(ops.rsqrt(ops.sum(ops.square(x))), 1e7))


def _truncated_normal_002():
    from .. import initializers
    return initializers.TruncatedNormal(stddev=0.02)
