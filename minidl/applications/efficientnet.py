"""EfficientNetB0 to B7 (Tan and Le 2019, "EfficientNet: Rethinking Model Scaling for Convolutional
Neural Networks"), as keras.applications.efficientnet builds it: a Rescaling and Normalization
stem, mobile inverted bottleneck blocks with squeeze-and-excitation and swish, and stochastic
depth (Dropout with noise_shape (None, 1, 1, 1)) on the identity blocks.

Keras draws the convolution kernels from VarianceScaling(2.0, "fan_out", truncated normal) and
the classifier's from VarianceScaling(1/3, "fan_out", uniform); minidl's initializers are the
named ones, so the convolutions start from he_normal (the same law with fan_in) and the
classifier from glorot_uniform. Shapes, names and weight counts are Keras's."""

import math

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

# kernel_size, repeats, filters_in, filters_out, expand_ratio, strides (id_skip True, se 0.25)
DEFAULT_BLOCKS_ARGS = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2),
                       (3, 3, 40, 80, 6, 2), (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2),
                       (3, 1, 192, 320, 6, 1))
SE_RATIO = 0.25
CONV_INITIALIZER = "he_normal"


def _conv_bn_act(x, filters, name, conv_name, bn_name, activation):
    """A 1x1 convolution without bias, BatchNormalization and (unless None) the activation."""
    x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_INITIALIZER, name=f"{name}{conv_name}")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}{bn_name}")(x)
    if activation is None:
        return x
    return layers.Activation(activation, name=f"{name}{conv_name.split('_')[0]}_activation")(x)


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16,
          kernel_size=3, strides=1, expand_ratio=1, se_ratio=0.0, id_skip=True):
    """One mobile inverted bottleneck: expansion, depthwise convolution, squeeze-and-excitation,
    projection, and (same shape in and out) stochastic depth plus the identity."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv_bn_act(x, filters, name, "expand_conv", "expand_bn", activation)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x.shape[1:], kernel_size),
                                 name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides,
                               padding="valid" if strides == 2 else "same", use_bias=False,
                               depthwise_initializer=CONV_INITIALIZER, name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=3, name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
        se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                           kernel_initializer=CONV_INITIALIZER, name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                           kernel_initializer=CONV_INITIALIZER, name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = _conv_bn_act(x, filters_out, name, "project_conv", "project_bn", None)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,
                 drop_connect_rate=0.2, depth_divisor=8, activation="swish",
                 blocks_args=DEFAULT_BLOCKS_ARGS, name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                 classes=1000, classifier_activation="softmax"):
    """The EfficientNet family's builder; blocks_args rows are (kernel_size, repeats,
    filters_in, filters_out, expand_ratio, strides) before width and depth scaling."""
    keras_file = (f"{name}{'.h5' if include_top else '_notop.h5'}", "efficientnet")  # Keras's
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, default_size=default_size,
                                     imagenet_file=keras_file)

    def round_filters(filters):
        filters *= width_coefficient
        new_filters = max(depth_divisor,
                          int(filters + depth_divisor / 2) // depth_divisor * depth_divisor)
        return int(new_filters + depth_divisor if new_filters < 0.9 * filters else new_filters)

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=3)(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x.shape[1:], 3),
                             name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_INITIALIZER, name="stem_conv")(x)
    x = layers.BatchNormalization(axis=3, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    b = 0
    blocks = float(sum(round_repeats(args[1]) for args in blocks_args))
    for i, (kernel_size, repeats, filters_in, filters_out, expand, strides) in enumerate(blocks_args):
        filters_in, filters_out = round_filters(filters_in), round_filters(filters_out)
        for j in range(round_repeats(repeats)):
            if j > 0:
                strides, filters_in = 1, filters_out
            x = block(x, activation, drop_connect_rate * b / blocks, name=f"block{i + 1}{chr(j + 97)}_",
                      filters_in=filters_in, filters_out=filters_out, kernel_size=kernel_size,
                      strides=strides, expand_ratio=expand, se_ratio=SE_RATIO)
            b += 1
    x = _conv_bn_act(x, round_filters(1280), "", "top_conv", "top_bn", activation)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        x = imagenet_utils.classifier(x, classes, classifier_activation)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation,
                                pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


# (width_coefficient, depth_coefficient, default_size, dropout_rate) of B0 to B7
SCALING = {"b0": (1.0, 1.0, 224, 0.2), "b1": (1.0, 1.1, 240, 0.2), "b2": (1.1, 1.2, 260, 0.3),
           "b3": (1.2, 1.4, 300, 0.3), "b4": (1.4, 1.8, 380, 0.4), "b5": (1.6, 2.2, 456, 0.4),
           "b6": (1.8, 2.6, 528, 0.5), "b7": (2.0, 3.1, 600, 0.5)}


def _scaled(variant, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, name):
    width, depth, size, dropout = SCALING[variant]
    return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top,
                        weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                        pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation)


def EfficientNetB0(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb0"):
    """keras.applications.EfficientNetB0: 5.3M weights at 224x224 and 1000 classes. The model
    takes pixels in [0, 255] (its stem rescales them). weights: None, "imagenet" (Keras's
    published file, from Keras's cache folder) or a weights file."""
    return _scaled("b0", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB1(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb1"):
    """keras.applications.EfficientNetB1: 7.9M weights, 240x240 by default."""
    return _scaled("b1", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb2"):
    """keras.applications.EfficientNetB2: 9.2M weights, 260x260 by default."""
    return _scaled("b2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb3"):
    """keras.applications.EfficientNetB3: 12.3M weights, 300x300 by default."""
    return _scaled("b3", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB4(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb4"):
    """keras.applications.EfficientNetB4: 19.5M weights, 380x380 by default."""
    return _scaled("b4", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB5(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb5"):
    """keras.applications.EfficientNetB5: 30.6M weights, 456x456 by default."""
    return _scaled("b5", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB6(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb6"):
    """keras.applications.EfficientNetB6: 43.3M weights, 528x528 by default."""
    return _scaled("b6", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def EfficientNetB7(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   name="efficientnetb7"):
    """keras.applications.EfficientNetB7: 66.7M weights, 600x600 by default."""
    return _scaled("b7", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def preprocess_input(x, data_format=None):
    """The identity, as Keras's: EfficientNet's own stem rescales and normalizes."""
    return x


__all__ = [f"EfficientNetB{i}" for i in range(8)] + ["preprocess_input", "decode_predictions"]
