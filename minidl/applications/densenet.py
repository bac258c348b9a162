"""DenseNet121, DenseNet169 and DenseNet201 (Huang et al. 2017, "Densely Connected Convolutional
Networks"), as keras.applications.densenet builds them: dense blocks whose every layer
(BN-ReLU-1x1, BN-ReLU-3x3 to 32 channels) is concatenated to its input, and transition blocks
halving the channels (1x1) and the image (2x2 average pooling)."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

EPSILON = 1.001e-5
GROWTH_RATE = 32


def _bn_relu(x, name):
    x = layers.BatchNormalization(axis=3, epsilon=EPSILON, name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def conv_block(x, growth_rate, name):
    """One dense layer: BN-ReLU-1x1 to 4 * growth_rate, BN-ReLU-3x3 to growth_rate, then its
    output concatenated to x."""
    x1 = _bn_relu(x, f"{name}_0")
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(x1)
    x1 = _bn_relu(x1, f"{name}_1")
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(x1)
    return layers.Concatenate(axis=3, name=f"{name}_concat")([x, x1])


def dense_block(x, blocks, name):
    for i in range(blocks):
        x = conv_block(x, GROWTH_RATE, name=f"{name}_block{i + 1}")
    return x


def transition_block(x, reduction, name):
    x = _bn_relu(x, name)
    x = layers.Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax", name="densenet"):
    """A DenseNet with blocks[i] dense layers in its four dense blocks."""
    depth = {(6, 12, 24, 16): 121, (6, 12, 32, 32): 169, (6, 12, 48, 32): 201}.get(tuple(blocks))
    keras_file = (f"densenet{depth}_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "densenet")
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, imagenet_file=keras_file)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks):
        x = dense_block(x, count, name=f"conv{stage + 2}")
        if stage < 3:
            x = transition_block(x, 0.5, name=f"pool{stage + 2}")
    x = layers.BatchNormalization(axis=3, epsilon=EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", "max_pool"))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def DenseNet121(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax", name="densenet121"):
    """keras.applications.DenseNet121: 8.1M weights at 1000 classes. weights: None, "imagenet"
    (Keras's published file, from Keras's cache folder) or a weights file."""
    return DenseNet((6, 12, 24, 16), include_top, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def DenseNet169(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax", name="densenet169"):
    """keras.applications.DenseNet169 (32 layers in the last two dense blocks)."""
    return DenseNet((6, 12, 32, 32), include_top, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def DenseNet201(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax", name="densenet201"):
    """keras.applications.DenseNet201 (48 and 32 layers in the last two dense blocks)."""
    return DenseNet((6, 12, 48, 32), include_top, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """Keras's 'torch' preprocessing: pixels to [0, 1], then each channel standardized with
    ImageNet's mean and deviation (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "preprocess_input",
           "decode_predictions"]
