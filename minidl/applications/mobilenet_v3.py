"""MobileNetV3Small and MobileNetV3Large (Howard et al. 2019, "Searching for MobileNetV3"), as
keras.applications.mobilenet_v3 builds them: inverted residual blocks with optional
squeeze-and-excitation (gated by hard sigmoid), hard swish in the later blocks, and a
Rescaling to [-1, 1] inside the model (include_preprocessing). minimalistic=True drops the
squeeze-and-excitation, the hard swish and the 5x5 kernels.

Keras computes the gate's hard sigmoid as ReLU(6)(x + 3) / 6, with arithmetic on symbolic
tensors that minidl's graphs do not have; minidl applies Activation("hard_sigmoid") (the same
function, relu6(x + 3) / 6) in the ReLU layer's place, so the layer count and every weighted
layer are Keras's; the gate layers' automatic names are "activation_<n>" instead of
"re_lu_<n>"."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions
from .mobilenet_v2 import _make_divisible as _depth

BN = {"axis": -1, "epsilon": 1e-3, "momentum": 0.999}

# (expansion, filters, kernel ("k": 5 unless minimalistic), stride, squeeze-excite, activation
# ("act": hard swish unless minimalistic)) of each block
SMALL_BLOCKS = ((1, 16, 3, 2, True, "relu"), (72 / 16, 24, 3, 2, False, "relu"),
                (88 / 24, 24, 3, 1, False, "relu"), (4, 40, "k", 2, True, "act"),
                (6, 40, "k", 1, True, "act"), (6, 40, "k", 1, True, "act"),
                (3, 48, "k", 1, True, "act"), (3, 48, "k", 1, True, "act"),
                (6, 96, "k", 2, True, "act"), (6, 96, "k", 1, True, "act"),
                (6, 96, "k", 1, True, "act"))
LARGE_BLOCKS = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"),
                (3, 24, 3, 1, False, "relu"), (3, 40, "k", 2, True, "relu"),
                (3, 40, "k", 1, True, "relu"), (3, 40, "k", 1, True, "relu"),
                (6, 80, 3, 2, False, "act"), (2.5, 80, 3, 1, False, "act"),
                (2.3, 80, 3, 1, False, "act"), (2.3, 80, 3, 1, False, "act"),
                (6, 112, 3, 1, True, "act"), (6, 112, 3, 1, True, "act"),
                (6, 160, "k", 2, True, "act"), (6, 160, "k", 1, True, "act"),
                (6, 160, "k", 1, True, "act"))


def _activation(x, kind):
    """kind "relu": an automatically named ReLU; "hard_swish": Activation("hard_swish")."""
    if kind == "relu":
        return layers.ReLU()(x)
    return layers.Activation("hard_swish")(x)


def _se_block(inputs, filters, se_ratio, prefix):
    x = layers.GlobalAveragePooling2D(keepdims=True,
                                      name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio, 8), kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv_1")(x)
    x = layers.Activation("hard_sigmoid")(x)      # Keras: ReLU(6)(x + 3) / 6, see above
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation,
                        block_id):
    shortcut = x
    prefix = "expanded_conv_"
    infilters = x.shape[-1]
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(_depth(infilters * expansion, 8), kernel_size=1, padding="same",
                          use_bias=False, name=f"{prefix}expand")(x)
        x = layers.BatchNormalization(name=f"{prefix}expand_bn", **BN)(x)
        x = _activation(x, activation)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x.shape[1:], kernel_size),
                                 name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride,
                               padding="same" if stride == 1 else "valid", use_bias=False,
                               name=f"{prefix}depthwise")(x)
    x = layers.BatchNormalization(name=f"{prefix}depthwise_bn", **BN)(x)
    x = _activation(x, activation)
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion, 8), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False,
                      name=f"{prefix}project")(x)
    x = layers.BatchNormalization(name=f"{prefix}project_bn", **BN)(x)
    if stride == 1 and infilters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def MobileNetV3(blocks, last_point_ch, input_shape=None, alpha=1.0, model_type="large",
                minimalistic=False, include_top=True, weights="imagenet", input_tensor=None,
                classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                include_preprocessing=True, name=None):
    """The MobileNetV3 builder; blocks as SMALL_BLOCKS / LARGE_BLOCKS. Without input_shape the
    input is (None, None, 3) even with the classifier (Keras's rule: it pools globally)."""
    owner = f"applications.{name}"
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ValueError(f"{owner}: alpha must be a positive number, got {alpha!r}")
    if weights == "imagenet" and ((not minimalistic and alpha not in (0.75, 1.0))
                                  or (minimalistic and alpha != 1.0)):
        raise ValueError(f"{owner}: weights='imagenet' needs alpha 0.75 or 1.0 (1.0 when "
                         f"minimalistic), got alpha={alpha}")
    model_name = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    keras_file = (f"weights_mobilenet_v3_{model_name}{'.h5' if include_top else '_no_top_v2.h5'}",
                  "mobilenet_v3")
    if input_tensor is not None and input_shape is None:
        input_shape = getattr(input_tensor, "sample_shape", None)
    if input_shape is None:
        input_shape = (None, None, 3)
    img_input = imagenet_utils.start(owner, weights, False, input_tensor, input_shape, pooling,
                                     classes, imagenet_file=keras_file)
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"{owner}: weights='imagenet' with include_top=True needs classes=1000 "
                         f"(the ImageNet classifier), got classes={classes!r}")
    if minimalistic:
        kernel, activation, se_ratio = 3, "relu", None
    else:
        kernel, activation, se_ratio = 5, "hard_swish", 0.25
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="conv")(x)
    x = layers.BatchNormalization(name="conv_bn", **BN)(x)
    x = _activation(x, activation)
    for block_id, (expansion, filters, k, stride, se, act) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha, 8),
                                kernel if k == "k" else k, stride, se_ratio if se else None,
                                activation if act == "act" else "relu", block_id)
    last_conv_ch = _depth(x.shape[-1] * 6, 8)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha, 8)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False,
                      name="conv_1")(x)
    x = layers.BatchNormalization(name="conv_1_bn", **BN)(x)
    x = _activation(x, activation)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True,
                          name="conv_2")(x)
        x = _activation(x, activation)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation,
                                pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Small"):
    """keras.applications.MobileNetV3Small: 2.6M weights at alpha 1.0 and 1000 classes. The
    model takes pixels in [0, 255] (include_preprocessing rescales them). weights: None,
    "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    return MobileNetV3(SMALL_BLOCKS, 1024, input_shape, alpha, "small", minimalistic,
                       include_top, weights, input_tensor, classes, pooling, dropout_rate,
                       classifier_activation, include_preprocessing, name)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True, name="MobileNetV3Large"):
    """keras.applications.MobileNetV3Large: 5.5M weights at alpha 1.0 and 1000 classes."""
    return MobileNetV3(LARGE_BLOCKS, 1280, input_shape, alpha, "large", minimalistic,
                       include_top, weights, input_tensor, classes, pooling, dropout_rate,
                       classifier_activation, include_preprocessing, name)


def preprocess_input(x, data_format=None):
    """The identity, as Keras's: the model's own Rescaling (include_preprocessing) scales."""
    return x


__all__ = ["MobileNetV3Small", "MobileNetV3Large", "preprocess_input", "decode_predictions"]
