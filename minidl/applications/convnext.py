"""ConvNeXt Tiny, Small, Base, Large and XLarge (Liu et al. 2022, "A ConvNet for the 2020s"), as
keras.applications.convnext builds them: a patchify stem and three downsampling blocks (each a
nested Sequential, as Keras's, so their weights sit under one layer name), then ConvNeXt
blocks of a 7x7 depthwise convolution (a grouped Conv2D), LayerNormalization, two Dense
pointwise layers with GELU, LayerScale and stochastic depth on the residual path.

Keras adds the residual with `inputs + x` on symbolic tensors, which minidl's graphs do not
have: minidl adds it with an automatically named Add layer (one more layer per block than
Keras lists; no weights, same numbers)."""

import numpy as np

from .. import initializers, layers
from ..layers.base import Layer
from ..layers.core import Dropout
from ..models import Sequential
from . import imagenet_utils
from .imagenet_utils import decode_predictions

MODEL_CONFIGS = {
    "tiny": ((3, 3, 9, 3), (96, 192, 384, 768)),
    "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
    "base": ((3, 3, 27, 3), (128, 256, 512, 1024)),
    "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
    "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048)),
}   # (depths, projection_dims) of each variant


class LayerScale(Layer):
    """x * gamma, gamma (projection_dim,) a trainable per-channel scale starting at init_values
    (Touvron et al. 2021, CaiT); Keras's keras.src.applications.convnext.LayerScale."""

    def __init__(self, init_values, projection_dim, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if isinstance(projection_dim, bool) or not isinstance(projection_dim, int) \
                or projection_dim < 1:
            raise ValueError(f"{self.describe()}: projection_dim must be a positive int, got "
                             f"{projection_dim!r}")
        self.init_values = float(init_values)
        self.projection_dim = projection_dim

    def get_config(self):
        return dict(super().get_config(), init_values=self.init_values,
                    projection_dim=self.projection_dim)

    def build(self, input_shape):
        if not input_shape or input_shape[-1] != self.projection_dim:
            raise ValueError(f"{self.describe()}: inputs must have projection_dim="
                             f"{self.projection_dim} channels on the last axis, got inputs of "
                             f"shape {(None,) + tuple(input_shape)}")
        self.gamma = self.add_weight("gamma", (self.projection_dim,),
                                     initializers.Constant(self.init_values))

    def compute_output_shape(self, input_shape):
        return input_shape

    def _zero_shift(self, call):
        zero = call.buffer("zero", (self.projection_dim,))
        self.backend.fill(zero, 0.0)
        return zero

    def forward(self, call, x, training):
        b = self.backend
        call.x = x
        out = call.buffer("out", b.shape(x))
        b.channel_scale_shift(out, x, self.gamma.value, self._zero_shift(call))
        return out

    def backward(self, call, dout):
        b = self.backend
        if self.trainable:     # dgamma = sum over every axis but the last of dout * x
            product = call.buffer("product", b.shape(dout))
            b.multiply(product, dout, call.x)
            b.bias_grad(call.grad(self.gamma), product)
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", b.shape(dout))
        b.channel_scale_shift(dx, dout, self.gamma.value, self._zero_shift(call))
        return dx


class StochasticDepth(Dropout):
    """Drops a residual branch per sample while training, the kept ones scaled by
    1 / (1 - drop_path_rate) (Huang et al. 2016); Keras's
    keras.src.applications.convnext.StochasticDepth. It is Dropout with one draw per sample
    (noise_shape (None, 1, ..., 1))."""

    def __init__(self, drop_path_rate, name=None, trainable=True):
        super().__init__(drop_path_rate, name=name, trainable=trainable)
        self.drop_path_rate = self.rate

    def get_config(self):
        config = Layer.get_config(self)
        return dict(config, drop_path_rate=self.drop_path_rate)

    def build(self, input_shape):
        self.noise_shape = (None,) + (1,) * len(input_shape)
        super().build(input_shape)


def convnext_block(x, projection_dim, drop_path_rate=0.0, layer_scale_init_value=1e-6,
                   name=None):
    inputs = x
    x = layers.Conv2D(projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                      name=f"{name}_depthwise_conv")(x)
    x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
    x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
    x = layers.Activation("gelu", name=f"{name}_gelu")(x)
    x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
    if layer_scale_init_value is not None:
        x = LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
    if drop_path_rate:
        x = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")(x)
    else:
        x = layers.Activation("linear", name=f"{name}_identity")(x)
    return layers.Add()([inputs, x])       # Keras: inputs + x, see above


def ConvNeXt(depths, projection_dims, drop_path_rate=0.0, layer_scale_init_value=1e-6,
             default_size=224, name="convnext", include_preprocessing=True, include_top=True,
             weights=None, input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", weights_name=None):
    """The ConvNeXt family's builder: depths blocks in four stages of projection_dims
    channels; drop_path_rate rises linearly from 0 over the blocks."""
    owner = f"applications.{name}"
    keras_file = (f"{name}{'.h5' if include_top else '_notop.h5'}", "convnext")
    if weights == "imagenet" and weights_name is not None and weights_name not in name:
        raise ValueError(f"{owner}: weights='imagenet' needs a model name containing "
                         f"{weights_name!r} (Keras names the weights file after the model)")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, default_size=default_size,
                                     imagenet_file=keras_file)
    x = img_input
    if include_preprocessing and img_input.shape[-1] == 3:
        x = layers.Normalization(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                 variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2,
                                           (0.225 * 255) ** 2],
                                 name=f"{name}_prestem_normalization")(x)
    downsample = [Sequential([
        layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
        layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm")],
        name=f"{name}_stem")]
    for i in range(3):
        downsample.append(Sequential([
            layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
            layers.Conv2D(projection_dims[i + 1], kernel_size=2, strides=2,
                          name=f"{name}_downsampling_conv_{i}")],
            name=f"{name}_downsampling_block_{i}"))
    depth_drop_rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]
    cur = 0
    for i in range(4):
        x = downsample[i](x)
        for j in range(depths[i]):
            x = convnext_block(x, projection_dims[i], depth_drop_rates[cur + j],
                               layer_scale_init_value, name=f"{name}_stage_{i}_block_{j}")
        cur += depths[i]
    if include_top:
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation,
                         name=f"{name}_head_dense")(x)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def _variant(variant, include_top, include_preprocessing, weights, input_tensor, input_shape,
             pooling, classes, classifier_activation, name):
    depths, dims = MODEL_CONFIGS[variant]
    return ConvNeXt(depths, dims, 0.0, 1e-6, 224, name=name,
                    include_preprocessing=include_preprocessing, include_top=include_top,
                    weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                    pooling=pooling, classes=classes,
                    classifier_activation=classifier_activation,
                    weights_name=f"convnext_{variant}")


def ConvNeXtTiny(include_top=True, include_preprocessing=True, weights="imagenet",
                 input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax", name="convnext_tiny"):
    """keras.applications.ConvNeXtTiny: 28.6M weights at 1000 classes; takes pixels in
    [0, 255] (include_preprocessing normalizes them). weights: None, "imagenet" (Keras's
    published file, from Keras's cache folder) or a weights file."""
    return _variant("tiny", include_top, include_preprocessing, weights, input_tensor,
                    input_shape, pooling, classes, classifier_activation, name)


def ConvNeXtSmall(include_top=True, include_preprocessing=True, weights="imagenet",
                  input_tensor=None, input_shape=None, pooling=None, classes=1000,
                  classifier_activation="softmax", name="convnext_small"):
    """keras.applications.ConvNeXtSmall: 50.2M weights at 1000 classes."""
    return _variant("small", include_top, include_preprocessing, weights, input_tensor,
                    input_shape, pooling, classes, classifier_activation, name)


def ConvNeXtBase(include_top=True, include_preprocessing=True, weights="imagenet",
                 input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax", name="convnext_base"):
    """keras.applications.ConvNeXtBase: 88.6M weights at 1000 classes."""
    return _variant("base", include_top, include_preprocessing, weights, input_tensor,
                    input_shape, pooling, classes, classifier_activation, name)


def ConvNeXtLarge(include_top=True, include_preprocessing=True, weights="imagenet",
                  input_tensor=None, input_shape=None, pooling=None, classes=1000,
                  classifier_activation="softmax", name="convnext_large"):
    """keras.applications.ConvNeXtLarge: 197.8M weights at 1000 classes."""
    return _variant("large", include_top, include_preprocessing, weights, input_tensor,
                    input_shape, pooling, classes, classifier_activation, name)


def ConvNeXtXLarge(include_top=True, include_preprocessing=True, weights="imagenet",
                   input_tensor=None, input_shape=None, pooling=None, classes=1000,
                   classifier_activation="softmax", name="convnext_xlarge"):
    """keras.applications.ConvNeXtXLarge: 350.2M weights at 1000 classes."""
    return _variant("xlarge", include_top, include_preprocessing, weights, input_tensor,
                    input_shape, pooling, classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """The identity, as Keras's: the model's own Normalization (include_preprocessing)
    scales."""
    return x


__all__ = ["ConvNeXtTiny", "ConvNeXtSmall", "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge",
           "LayerScale", "StochasticDepth", "preprocess_input", "decode_predictions"]
