"""EfficientNetV2 B0 to B3, S, M and L (Tan and Le 2021, "EfficientNetV2: Smaller Models and
Faster Training"), as keras.applications.efficientnet_v2 builds them: fused MBConv blocks (one
full convolution in place of expansion + depthwise) in the early stages, MBConv blocks with
squeeze-and-excitation later, BatchNormalization momentum 0.9, and the preprocessing inside
the model (include_preprocessing: the B variants rescale to [0, 1] and normalize with
ImageNet's mean and deviation, S/M/L rescale to [-1, 1]).

As in minidl's EfficientNet (efficientnet.py), convolutions start from he_normal where Keras
draws VarianceScaling(2.0, "fan_out"); shapes, names and weight counts are Keras's. Keras's
stochastic depth is Dropout(rate = drop_connect_rate * block / blocks) on the identity blocks,
and none on the first block (rate 0): minidl builds the same layers."""

import math

from .. import layers
from . import imagenet_utils
from .efficientnet import CONV_INITIALIZER
from .imagenet_utils import decode_predictions

# (kernel_size, num_repeat, input_filters, output_filters, expand_ratio, se_ratio, strides,
# fused) of each stage, before width and depth scaling
_B_BLOCKS = ((3, 1, 32, 16, 1, 0, 1, True), (3, 2, 16, 32, 4, 0, 2, True),
             (3, 2, 32, 48, 4, 0, 2, True), (3, 3, 48, 96, 4, 0.25, 2, False),
             (3, 5, 96, 112, 6, 0.25, 1, False), (3, 8, 112, 192, 6, 0.25, 2, False))
BLOCKS_ARGS = {
    "efficientnetv2-b0": _B_BLOCKS, "efficientnetv2-b1": _B_BLOCKS,
    "efficientnetv2-b2": _B_BLOCKS, "efficientnetv2-b3": _B_BLOCKS,
    "efficientnetv2-s": ((3, 2, 24, 24, 1, 0, 1, True), (3, 4, 24, 48, 4, 0, 2, True),
                         (3, 4, 48, 64, 4, 0, 2, True), (3, 6, 64, 128, 4, 0.25, 2, False),
                         (3, 9, 128, 160, 6, 0.25, 1, False),
                         (3, 15, 160, 256, 6, 0.25, 2, False)),
    "efficientnetv2-m": ((3, 3, 24, 24, 1, 0, 1, True), (3, 5, 24, 48, 4, 0, 2, True),
                         (3, 5, 48, 80, 4, 0, 2, True), (3, 7, 80, 160, 4, 0.25, 2, False),
                         (3, 14, 160, 176, 6, 0.25, 1, False),
                         (3, 18, 176, 304, 6, 0.25, 2, False),
                         (3, 5, 304, 512, 6, 0.25, 1, False)),
    "efficientnetv2-l": ((3, 4, 32, 32, 1, 0, 1, True), (3, 7, 32, 64, 4, 0, 2, True),
                         (3, 7, 64, 96, 4, 0, 2, True), (3, 10, 96, 192, 4, 0.25, 2, False),
                         (3, 19, 192, 224, 6, 0.25, 1, False),
                         (3, 25, 224, 384, 6, 0.25, 2, False),
                         (3, 7, 384, 640, 6, 0.25, 1, False)),
}
# (width_coefficient, depth_coefficient, default_size) of each variant
SCALING = {"b0": (1.0, 1.0, 224), "b1": (1.0, 1.1, 240), "b2": (1.1, 1.2, 260),
           "b3": (1.2, 1.4, 300), "s": (1.0, 1.0, 384), "m": (1.0, 1.0, 480),
           "l": (1.0, 1.0, 480)}
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def round_filters(filters, width_coefficient, min_depth=8, depth_divisor=8):
    filters *= width_coefficient
    return int(max(min_depth or depth_divisor,
                   int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def round_repeats(repeats, depth_coefficient):
    return int(math.ceil(depth_coefficient * repeats))


def _conv(x, filters, kernel_size, strides, name, activation=None):
    return layers.Conv2D(filters, kernel_size, strides=strides, padding="same", use_bias=False,
                         activation=activation, kernel_initializer=CONV_INITIALIZER,
                         name=name)(x)


def _bn(x, momentum, name):
    return layers.BatchNormalization(axis=3, momentum=momentum, name=name)(x)


def _squeeze_excite(x, filters, input_filters, se_ratio, activation, name):
    filters_se = max(1, int(input_filters * se_ratio))
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
    se = layers.Conv2D(filters_se, 1, padding="same", activation=activation,
                       kernel_initializer=CONV_INITIALIZER, name=f"{name}se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                       kernel_initializer=CONV_INITIALIZER, name=f"{name}se_expand")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _residual(x, inputs, input_filters, output_filters, strides, survival_probability, name):
    if strides == 1 and input_filters == output_filters:
        if survival_probability:     # Keras's rate: drop_connect_rate * block / blocks
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1),
                               name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def mb_conv_block(inputs, input_filters, output_filters, expand_ratio, kernel_size, strides,
                  se_ratio, bn_momentum, activation, survival_probability, name):
    """1x1 expansion, depthwise convolution (stride), squeeze-and-excitation, 1x1 projection."""
    filters = input_filters * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(x, filters, 1, 1, f"{name}expand_conv")
        x = _bn(x, bn_momentum, f"{name}expand_bn")
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="same", use_bias=False,
                               depthwise_initializer=CONV_INITIALIZER, name=f"{name}dwconv2")(x)
    x = _bn(x, bn_momentum, f"{name}bn")
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
    x = _conv(x, output_filters, 1, 1, f"{name}project_conv")
    x = _bn(x, bn_momentum, f"{name}project_bn")
    return _residual(x, inputs, input_filters, output_filters, strides, survival_probability,
                     name)


def fused_mb_conv_block(inputs, input_filters, output_filters, expand_ratio, kernel_size,
                        strides, se_ratio, bn_momentum, activation, survival_probability, name):
    """One kernel_size convolution (stride) expanding, optional squeeze-and-excitation, then a
    1x1 projection; without expansion the projection itself is the strided convolution."""
    filters = input_filters * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(x, filters, kernel_size, strides, f"{name}expand_conv")
        x = _bn(x, bn_momentum, f"{name}expand_bn")
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
    x = _conv(x, output_filters, 1 if expand_ratio != 1 else kernel_size,
              1 if expand_ratio != 1 else strides, f"{name}project_conv")
    x = _bn(x, bn_momentum, f"{name}project_bn")
    if expand_ratio == 1:
        x = layers.Activation(activation, name=f"{name}project_activation")(x)
    return _residual(x, inputs, input_filters, output_filters, strides, survival_probability,
                     name)


def EfficientNetV2(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,
                   drop_connect_rate=0.2, depth_divisor=8, min_depth=8, bn_momentum=0.9,
                   activation="swish", blocks_args="default", name="efficientnetv2",
                   include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                   pooling=None, classes=1000, classifier_activation="softmax",
                   include_preprocessing=True):
    """The EfficientNetV2 family's builder; blocks_args "default" takes BLOCKS_ARGS[name]."""
    owner = f"applications.{name}"
    if blocks_args == "default":
        blocks_args = BLOCKS_ARGS[name]
    keras_file = (f"{name}{'.h5' if include_top else '_notop.h5'}", "efficientnet_v2")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, default_size=default_size,
                                     imagenet_file=keras_file)
    x = img_input
    if include_preprocessing:
        if name.split("-")[-1].startswith("b") and img_input.shape[-1] == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=list(IMAGENET_MEAN),
                                     variance=[s ** 2 for s in IMAGENET_STD], axis=3)(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    rounded = lambda f: round_filters(f, width_coefficient, min_depth, depth_divisor)
    x = _conv(x, rounded(blocks_args[0][2]), 3, 2, "stem_conv")
    x = _bn(x, bn_momentum, "stem_bn")
    x = layers.Activation(activation, name="stem_activation")(x)
    b = 0
    blocks = float(sum(args[1] for args in blocks_args))
    for i, (kernel_size, repeats, filters_in, filters_out, expand, se_ratio, strides,
            fused) in enumerate(blocks_args):
        if repeats <= 0:
            raise ValueError(f"{owner}: every stage needs num_repeat > 0, got {repeats}")
        filters_in, filters_out = rounded(filters_in), rounded(filters_out)
        block = fused_mb_conv_block if fused else mb_conv_block
        for j in range(round_repeats(repeats, depth_coefficient)):
            if j > 0:
                strides, filters_in = 1, filters_out
            x = block(x, filters_in, filters_out, expand, kernel_size, strides, se_ratio,
                      bn_momentum, activation, drop_connect_rate * b / blocks,
                      name=f"block{i + 1}{chr(j + 97)}_")
            b += 1
    x = _conv(x, rounded(1280), 1, 1, "top_conv")
    x = _bn(x, bn_momentum, "top_bn")
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        x = imagenet_utils.classifier(x, classes, classifier_activation)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation,
                                pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def _variant(key, include_top, weights, input_tensor, input_shape, pooling, classes,
             classifier_activation, include_preprocessing, name):
    width, depth, size = SCALING[key]
    return EfficientNetV2(width, depth, size, name=name, include_top=include_top,
                          weights=weights, input_tensor=input_tensor, input_shape=input_shape,
                          pooling=pooling, classes=classes,
                          classifier_activation=classifier_activation,
                          include_preprocessing=include_preprocessing)


def EfficientNetV2B0(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                     pooling=None, classes=1000, classifier_activation="softmax",
                     include_preprocessing=True, name="efficientnetv2-b0"):
    """keras.applications.EfficientNetV2B0: 7.2M weights, 224x224 by default; takes pixels in
    [0, 255]. weights: None, "imagenet" (Keras's published file, from Keras's cache folder)
    or a weights file."""
    return _variant("b0", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2B1(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                     pooling=None, classes=1000, classifier_activation="softmax",
                     include_preprocessing=True, name="efficientnetv2-b1"):
    """keras.applications.EfficientNetV2B1: 8.2M weights, 240x240 by default."""
    return _variant("b1", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2B2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                     pooling=None, classes=1000, classifier_activation="softmax",
                     include_preprocessing=True, name="efficientnetv2-b2"):
    """keras.applications.EfficientNetV2B2: 10.2M weights, 260x260 by default."""
    return _variant("b2", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2B3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                     pooling=None, classes=1000, classifier_activation="softmax",
                     include_preprocessing=True, name="efficientnetv2-b3"):
    """keras.applications.EfficientNetV2B3: 14.5M weights, 300x300 by default."""
    return _variant("b3", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2S(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                    pooling=None, classes=1000, classifier_activation="softmax",
                    include_preprocessing=True, name="efficientnetv2-s"):
    """keras.applications.EfficientNetV2S: 21.6M weights, 384x384 by default."""
    return _variant("s", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2M(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                    pooling=None, classes=1000, classifier_activation="softmax",
                    include_preprocessing=True, name="efficientnetv2-m"):
    """keras.applications.EfficientNetV2M: 54.4M weights, 480x480 by default."""
    return _variant("m", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def EfficientNetV2L(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                    pooling=None, classes=1000, classifier_activation="softmax",
                    include_preprocessing=True, name="efficientnetv2-l"):
    """keras.applications.EfficientNetV2L: 119.0M weights, 480x480 by default."""
    return _variant("l", include_top, weights, input_tensor, input_shape, pooling, classes,
                    classifier_activation, include_preprocessing, name)


def preprocess_input(x, data_format=None):
    """The identity, as Keras's: the model's own layers (include_preprocessing) scale."""
    return x


__all__ = ["EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
           "EfficientNetV2S", "EfficientNetV2M", "EfficientNetV2L", "preprocess_input",
           "decode_predictions"]
