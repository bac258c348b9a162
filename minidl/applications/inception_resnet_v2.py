"""InceptionResNetV2 (Szegedy et al. 2016, "Inception-v4, Inception-ResNet and the Impact of
Residual Connections on Learning"), as keras.applications.inception_resnet_v2 builds it: an
Inception stem, then 10 block35, 20 block17 and 10 block8 residual Inception blocks whose
branches are concatenated, projected by a 1x1 convolution with bias, scaled and added to the
block's input (CustomScaleLayer); 299x299 by default, at least 75x75."""

from .. import layers
from ..layers.merge import _Merge
from . import imagenet_utils
from .imagenet_utils import decode_predictions


class CustomScaleLayer(_Merge):
    """inputs[0] + inputs[1] * scale: the scaled residual of an Inception-ResNet block
    (Keras's keras.src.applications.inception_resnet_v2.CustomScaleLayer)."""

    exact_inputs = 2

    def __init__(self, scale, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"{self.describe()}: scale must be a number, got {scale!r}")
        self.scale = float(scale)

    def get_config(self):
        return dict(super().get_config(), scale=self.scale)

    def forward(self, call, xs, training):
        b = self.backend
        out = call.buffer("out", b.shape(xs[0]))
        b.axpby(out, 1.0, xs[0], self.scale, xs[1])
        return out

    def backward(self, call, dout):
        b = self.backend
        dup = call.buffer("dup", b.shape(dout))
        b.axpby(dup, self.scale, dout, 0.0, dout)
        return [dout, dup]


def conv2d_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu",
              use_bias=False, name=None):
    """Convolution; without bias, BatchNormalization(scale=False); then the activation."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias,
                      name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=3, scale=False,
                                      name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


def inception_resnet_block(x, scale, block_type, block_idx, activation="relu"):
    """block35, block17 or block8: its branches concatenated ("<type>_<idx>_mixed"), a 1x1
    projection to x's channels ("<type>_<idx>_conv"), x + scale * projection, activation."""
    if block_type == "block35":
        branch_0 = conv2d_bn(x, 32, 1)
        branch_1 = conv2d_bn(x, 32, 1)
        branch_1 = conv2d_bn(branch_1, 32, 3)
        branch_2 = conv2d_bn(x, 32, 1)
        branch_2 = conv2d_bn(branch_2, 48, 3)
        branch_2 = conv2d_bn(branch_2, 64, 3)
        branches = [branch_0, branch_1, branch_2]
    elif block_type == "block17":
        branch_0 = conv2d_bn(x, 192, 1)
        branch_1 = conv2d_bn(x, 128, 1)
        branch_1 = conv2d_bn(branch_1, 160, [1, 7])
        branch_1 = conv2d_bn(branch_1, 192, [7, 1])
        branches = [branch_0, branch_1]
    elif block_type == "block8":
        branch_0 = conv2d_bn(x, 192, 1)
        branch_1 = conv2d_bn(x, 192, 1)
        branch_1 = conv2d_bn(branch_1, 224, [1, 3])
        branch_1 = conv2d_bn(branch_1, 256, [3, 1])
        branches = [branch_0, branch_1]
    else:
        raise ValueError("inception_resnet_block: block_type must be 'block35', 'block17' or "
                         f"'block8', got {block_type!r}")
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=3, name=f"{block_name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[3], 1, activation=None, use_bias=True,
                   name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                      pooling=None, classes=1000, classifier_activation="softmax",
                      name="inception_resnet_v2"):
    """keras.applications.InceptionResNetV2: 55.9M weights at 1000 classes. weights: None,
    "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    keras_file = (f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "inception_resnet_v2")
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, default_size=299,
                                     min_size=75, imagenet_file=keras_file)
    x = conv2d_bn(img_input, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    # mixed_5b (Inception-A)
    branch_0 = conv2d_bn(x, 96, 1)
    branch_1 = conv2d_bn(x, 48, 1)
    branch_1 = conv2d_bn(branch_1, 64, 5)
    branch_2 = conv2d_bn(x, 64, 1)
    branch_2 = conv2d_bn(branch_2, 96, 3)
    branch_2 = conv2d_bn(branch_2, 96, 3)
    branch_pool = layers.AveragePooling2D(3, strides=1, padding="same")(x)
    branch_pool = conv2d_bn(branch_pool, 64, 1)
    x = layers.Concatenate(axis=3, name="mixed_5b")([branch_0, branch_1, branch_2, branch_pool])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    # mixed_6a (Reduction-A)
    branch_0 = conv2d_bn(x, 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(x, 256, 1)
    branch_1 = conv2d_bn(branch_1, 256, 3)
    branch_1 = conv2d_bn(branch_1, 384, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_6a")([branch_0, branch_1, branch_pool])
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    # mixed_7a (Reduction-B)
    branch_0 = conv2d_bn(x, 256, 1)
    branch_0 = conv2d_bn(branch_0, 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(x, 256, 1)
    branch_1 = conv2d_bn(branch_1, 288, 3, strides=2, padding="valid")
    branch_2 = conv2d_bn(x, 256, 1)
    branch_2 = conv2d_bn(branch_2, 288, 3)
    branch_2 = conv2d_bn(branch_2, 320, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_7a")([branch_0, branch_1, branch_2, branch_pool])
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", None) if include_top else (None, None))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["InceptionResNetV2", "preprocess_input", "decode_predictions"]
