"""ResNet50V2, ResNet101V2 and ResNet152V2 (He et al. 2016, "Identity Mappings in Deep Residual
Networks"), as keras.applications.resnet_v2 builds them: pre-activation bottleneck blocks
(BatchNormalization and ReLU before the convolutions) whose LAST block of a stage carries the
stride, a max-pooled identity shortcut there, and a final BatchNormalization + ReLU."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions
from .resnet import EPSILON


def _bn(x, name):
    return layers.BatchNormalization(axis=3, epsilon=EPSILON, name=name)(x)


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    """BN-ReLU, then 1x1 -> kernel_size x kernel_size (stride) -> 1x1 to 4 * filters, added to
    the shortcut: a 1x1 convolution of the pre-activation, or x (max-pooled 1x1 when strided)."""
    preact = _bn(x, f"{name}_preact_bn")
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = _bn(x, f"{name}_1_bn")
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False,
                      name=f"{name}_2_conv")(x)
    x = _bn(x, f"{name}_2_bn")
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def ResNetV2(stage_blocks, weights_name, include_top, weights, input_tensor, input_shape, pooling,
             classes, classifier_activation, name):
    """A ResNet v2 with stage_blocks blocks in its four stages (64 to 512 filters);
    weights_name names Keras's weights files ("resnet50v2", ...)."""
    keras_file = (f"{weights_name}_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "resnet")
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, imagenet_file=keras_file)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, blocks) in enumerate(zip((64, 128, 256, 512), stage_blocks)):
        x = stack_residual_blocks_v2(x, filters, blocks, stride1=1 if stage == 3 else 2,
                                     name=f"conv{stage + 2}")
    x = _bn(x, "post_bn")
    x = layers.Activation("relu", name="post_relu")(x)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
               pooling=None, classes=1000, classifier_activation="softmax", name="resnet50v2"):
    """keras.applications.ResNet50V2: 25.6M weights at 1000 classes. weights: None, "imagenet"
    (Keras's published file, from Keras's cache folder) or a weights file."""
    return ResNetV2((3, 4, 6, 3), "resnet50v2", include_top, weights,
                    input_tensor, input_shape, pooling, classes, classifier_activation, name)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax", name="resnet101v2"):
    """keras.applications.ResNet101V2 (23 blocks in the third stage)."""
    return ResNetV2((3, 4, 23, 3), "resnet101v2", include_top, weights,
                    input_tensor, input_shape, pooling, classes, classifier_activation, name)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax", name="resnet152v2"):
    """keras.applications.ResNet152V2 (8 and 36 blocks in the second and third stages)."""
    return ResNetV2((3, 8, 36, 3), "resnet152v2", include_top, weights,
                    input_tensor, input_shape, pooling, classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "preprocess_input", "decode_predictions"]
