"""Xception (Chollet 2017, "Xception: Deep Learning with Depthwise Separable Convolutions"), as
keras.applications.xception builds it: an entry flow of strided separable-convolution blocks
with 1x1 convolution shortcuts, eight middle-flow blocks of three separable convolutions with
identity shortcuts, and an exit flow; 299x299 by default, at least 71x71."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions


def _sepconv_bn(x, filters, name):
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=-1, name=f"{name}_bn")(x)


def _strided_block(x, filters, block, first_relu=True):
    """Two separable convolutions and a 3x3 stride-2 max pooling, plus a 1x1 stride-2
    convolution shortcut (automatically named, as Keras's)."""
    residual = layers.Conv2D(filters[1], (1, 1), strides=(2, 2), padding="same",
                             use_bias=False)(x)
    residual = layers.BatchNormalization(axis=-1)(residual)
    if first_relu:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _sepconv_bn(x, filters[0], f"block{block}_sepconv1")
    x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sepconv_bn(x, filters[1], f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax", name="xception"):
    """keras.applications.Xception: 22.9M weights at 1000 classes. weights: None, "imagenet"
    (Keras's published file, from Keras's cache folder) or a weights file."""
    keras_file = (f"xception_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "xception")
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, default_size=299,
                                     min_size=71, imagenet_file=keras_file)
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = layers.BatchNormalization(axis=-1, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=-1, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _strided_block(x, (128, 128), 2, first_relu=False)
    x = _strided_block(x, (256, 256), 3)
    x = _strided_block(x, (728, 728), 4)
    for i in range(8):
        residual = x
        prefix = f"block{i + 5}"
        for conv in (1, 2, 3):
            x = layers.Activation("relu", name=f"{prefix}_sepconv{conv}_act")(x)
            x = _sepconv_bn(x, 728, f"{prefix}_sepconv{conv}")
        x = layers.add([x, residual])
    x = _strided_block(x, (728, 1024), 13)
    x = _sepconv_bn(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sepconv_bn(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", None) if include_top else (None, None))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["Xception", "preprocess_input", "decode_predictions"]
