"""MobileNetV2 (Sandler et al. 2018, "MobileNetV2: Inverted Residuals and Linear Bottlenecks"),
as keras.applications.mobilenet_v2 builds it: inverted residual blocks (1x1 expansion, 3x3
depthwise convolution, linear 1x1 projection) with ReLU(6), BatchNormalization with momentum
0.999, and the width multiplier `alpha`."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

# (filters, stride, expansion) of blocks 0 to 16
BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6),
          (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6),
          (160, 1, 6), (160, 1, 6), (320, 1, 6))


def _make_divisible(v, divisor, min_value=None):
    """v rounded to a multiple of divisor, never more than 10% below v (Keras's rule)."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(x, name):
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)(x)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False,
                          activation=None, name=f"{prefix}expand")(x)
        x = _bn(x, f"{prefix}expand_BN")
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x.shape[1:], 3),
                                 name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=f"{prefix}depthwise")(x)
    x = _bn(x, f"{prefix}depthwise_BN")
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=f"{prefix}project")(x)
    x = _bn(x, f"{prefix}project_BN")
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",
                input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax",
                name=None):
    """keras.applications.MobileNetV2: 3.5M weights at alpha 1.0 and 1000 classes; any input of
    at least 32x32. alpha scales every layer's width (the last one's only above 1.0). weights:
    None, "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    owner = "applications.MobileNetV2"
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ValueError(f"{owner}: alpha must be a positive number, got {alpha!r}")
    # Keras's files exist for 96 to 224 pixels; other sizes read the 224 one (as Keras)
    size = (input_shape or getattr(input_tensor, "sample_shape", None) or (224,))[0]
    rows = size if size in (96, 128, 160, 192, 224) else 224
    keras_file = (f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}"
                  f"{'' if include_top else '_no_top'}.h5", "mobilenet_v2")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, imagenet_file=keras_file)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn(x, "bn_Conv1")
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride,
                                expansion=expansion, block_id=block_id)
    last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn(x, "Conv_1_bn")
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation)
    if name is None:
        name = f"mobilenetv2_{alpha:0.2f}_{img_input.shape[1]}"
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["MobileNetV2", "preprocess_input", "decode_predictions"]
