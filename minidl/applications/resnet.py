"""ResNet50, ResNet101 and ResNet152 (He et al. 2015, "Deep Residual Learning for Image
Recognition"), layer for layer and name for name as keras.applications.resnet builds them:
bottleneck blocks whose first 1x1 convolution carries the stride, convolutions with biases,
BatchNormalization with epsilon 1.001e-5."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

EPSILON = 1.001e-5


def _conv_bn(x, filters, kernel_size, name, strides=1, padding="valid"):
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding,
                      name=f"{name}_conv")(x)
    return layers.BatchNormalization(axis=3, epsilon=EPSILON, name=f"{name}_bn")(x)


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """1x1 (stride) -> kernel_size x kernel_size -> 1x1 to 4 * filters, plus the shortcut (a
    1x1 convolution with BatchNormalization when conv_shortcut), then ReLU."""
    if conv_shortcut:
        shortcut = _conv_bn(x, 4 * filters, 1, f"{name}_0", strides=stride)
    else:
        shortcut = x
    x = _conv_bn(x, filters, 1, f"{name}_1", strides=stride)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = _conv_bn(x, filters, kernel_size, f"{name}_2", padding="same")
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = _conv_bn(x, 4 * filters, 1, f"{name}_3")
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def ResNet(stage_blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
           pooling=None, classes=1000, classifier_activation="softmax", name="resnet"):
    """A ResNet v1 with stage_blocks bottleneck blocks in its four stages (64, 128, 256 and 512
    filters; 256 to 2048 channels out)."""
    owner = f"applications.{name}"
    depth = {(3, 4, 6, 3): 50, (3, 4, 23, 3): 101, (3, 8, 36, 3): 152}.get(tuple(stage_blocks))
    keras_file = (f"resnet{depth}_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "resnet")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, imagenet_file=keras_file)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = _conv_bn(x, 64, 7, "conv1", strides=2)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, blocks) in enumerate(zip((64, 128, 256, 512), stage_blocks)):
        x = stack_residual_blocks_v1(x, filters, blocks, stride1=1 if stage == 0 else 2,
                                     name=f"conv{stage + 2}")
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax", name="resnet50"):
    """keras.applications.ResNet50: 25.6M weights at 1000 classes. weights: None, "imagenet"
    (Keras's published file, from Keras's cache folder) or a weights file."""
    return ResNet((3, 4, 6, 3), include_top, weights, input_tensor, input_shape, pooling, classes,
                  classifier_activation, name)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name="resnet101"):
    """keras.applications.ResNet101 (4, 23 blocks in the third stage)."""
    return ResNet((3, 4, 23, 3), include_top, weights, input_tensor, input_shape, pooling,
                  classes, classifier_activation, name)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax", name="resnet152"):
    """keras.applications.ResNet152 (8 and 36 blocks in the second and third stages)."""
    return ResNet((3, 8, 36, 3), include_top, weights, input_tensor, input_shape, pooling,
                  classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """Keras's 'caffe' preprocessing: RGB -> BGR, minus ImageNet's mean pixel (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


__all__ = ["ResNet50", "ResNet101", "ResNet152", "preprocess_input", "decode_predictions"]
