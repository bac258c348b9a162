"""MobileNet (Howard et al. 2017, "MobileNets: Efficient Convolutional Neural Networks for Mobile
Vision Applications"), as keras.applications.mobilenet builds it: a 3x3 convolution then 13
depthwise-separable blocks (3x3 depthwise, 1x1 pointwise, each with BatchNormalization and
ReLU(6)), the width multiplier `alpha` and the depthwise `depth_multiplier`; its classifier is
a 1x1 convolution on the pooled features."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

# (pointwise filters, stride) of blocks 1 to 13
BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
          (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))
IMAGENET_ALPHAS = {0.25: "2_5", 0.5: "5_0", 0.75: "7_5", 1.0: "1_0"}
IMAGENET_ROWS = (128, 160, 192, 224)


def _conv_block(inputs, filters, alpha, kernel=(3, 3), strides=(1, 1)):
    x = layers.Conv2D(int(filters * alpha), kernel, padding="same", use_bias=False,
                      strides=strides, name="conv1")(inputs)
    x = layers.BatchNormalization(axis=-1, name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(inputs, pointwise_conv_filters, alpha, depth_multiplier=1, stride=1,
                          block_id=1):
    """3x3 depthwise (stride; TensorFlow's 'same' through a bottom/right pad when strided),
    then 1x1 pointwise to int(pointwise_conv_filters * alpha), each with BN and ReLU(6)."""
    x = inputs
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                               depth_multiplier=depth_multiplier, strides=stride,
                               use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(pointwise_conv_filters * alpha), (1, 1), padding="same", use_bias=False,
                      strides=(1, 1), name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True,
              weights="imagenet", input_tensor=None, pooling=None, classes=1000,
              classifier_activation="softmax", name=None):
    """keras.applications.MobileNet: 4.3M weights at alpha 1.0 and 1000 classes; any input of
    at least 32x32. weights: None, "imagenet" (Keras's published file for alpha 0.25, 0.5,
    0.75 or 1.0 and depth_multiplier 1, from Keras's cache folder) or a weights file."""
    owner = "applications.MobileNet"
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ValueError(f"{owner}: alpha must be a positive number, got {alpha!r}")
    if isinstance(depth_multiplier, bool) or not isinstance(depth_multiplier, int) \
            or depth_multiplier < 1:
        raise ValueError(f"{owner}: depth_multiplier must be a positive int, got "
                         f"{depth_multiplier!r}")
    if weights == "imagenet" and depth_multiplier != 1:
        raise ValueError(f"{owner}: weights='imagenet' needs depth_multiplier=1, got "
                         f"depth_multiplier={depth_multiplier}")
    if weights == "imagenet" and alpha not in IMAGENET_ALPHAS:
        raise ValueError(f"{owner}: weights='imagenet' needs alpha 0.25, 0.5, 0.75 or 1.0, got "
                         f"alpha={alpha}")
    # Keras's default size is the given square side when it has a file for it, else 224
    default_size = 224
    if input_shape is not None and len(input_shape) == 3 and input_shape[0] == input_shape[1] \
            and input_shape[0] in IMAGENET_ROWS:
        default_size = input_shape[0]
    size = (input_shape or getattr(input_tensor, "sample_shape", None) or (None, None))[:2]
    file_rows = size[0] if size[0] == size[1] and size[0] in IMAGENET_ROWS else 224
    keras_file = (f"mobilenet_{IMAGENET_ALPHAS.get(alpha, '1_0')}_{file_rows}_tf"
                  f"{'' if include_top else '_no_top'}.h5", "mobilenet")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, default_size=default_size,
                                     imagenet_file=keras_file)
    x = _conv_block(img_input, 32, alpha, strides=(2, 2))
    for block_id, (filters, stride) in enumerate(BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation)
    if name is None:     # Keras names the model after the file's size with ImageNet weights
        rows = file_rows if weights == "imagenet" else img_input.shape[1]
        name = f"mobilenet_{alpha:0.2f}_{rows}"
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["MobileNet", "preprocess_input", "decode_predictions"]
