"""InceptionV3 (Szegedy et al. 2015, "Rethinking the Inception Architecture for Computer
Vision"), as keras.applications.inception_v3 builds it: a convolutional stem, then eleven
Inception modules (mixed0 to mixed10) whose parallel branches are concatenated; every
convolution is followed by BatchNormalization without scale and ReLU; 299x299 by default, at
least 75x75. Like Keras's, every layer but the mixed concatenations is automatically named."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions


def conv2d_bn(x, filters, num_row, num_col, padding="same", strides=(1, 1), name=None):
    """Convolution without bias, BatchNormalization(scale=False), ReLU."""
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding,
                      use_bias=False, name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=3, scale=False,
                                  name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _avg_pool_branch(x, filters):
    branch = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv2d_bn(branch, filters, 1, 1)


def _module_35(x, pool_filters, name):
    """mixed0 to mixed2: 1x1, 5x5, double 3x3 and pooled branches."""
    branch1x1 = conv2d_bn(x, 64, 1, 1)
    branch5x5 = conv2d_bn(x, 48, 1, 1)
    branch5x5 = conv2d_bn(branch5x5, 64, 5, 5)
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch_pool = _avg_pool_branch(x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool], axis=3,
                              name=name)


def _module_17(x, filters, name):
    """mixed4 to mixed7: 1x1, factorized 7x7, double factorized 7x7 and pooled branches."""
    branch1x1 = conv2d_bn(x, 192, 1, 1)
    branch7x7 = conv2d_bn(x, filters, 1, 1)
    branch7x7 = conv2d_bn(branch7x7, filters, 1, 7)
    branch7x7 = conv2d_bn(branch7x7, 192, 7, 1)
    branch7x7dbl = conv2d_bn(x, filters, 1, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters, 1, 7)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, 192, 1, 7)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool], axis=3,
                              name=name)


def _module_8(x, i):
    """mixed9 and mixed10: 1x1, split 3x3, double split 3x3 and pooled branches."""
    branch1x1 = conv2d_bn(x, 320, 1, 1)
    branch3x3 = conv2d_bn(x, 384, 1, 1)
    branch3x3_1 = conv2d_bn(branch3x3, 384, 1, 3)
    branch3x3_2 = conv2d_bn(branch3x3, 384, 3, 1)
    branch3x3 = layers.concatenate([branch3x3_1, branch3x3_2], axis=3, name=f"mixed9_{i}")
    branch3x3dbl = conv2d_bn(x, 448, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 384, 3, 3)
    branch3x3dbl_1 = conv2d_bn(branch3x3dbl, 384, 1, 3)
    branch3x3dbl_2 = conv2d_bn(branch3x3dbl, 384, 3, 1)
    branch3x3dbl = layers.concatenate([branch3x3dbl_1, branch3x3dbl_2], axis=3)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=3,
                              name=f"mixed{9 + i}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax",
                name="inception_v3"):
    """keras.applications.InceptionV3: 23.9M weights at 1000 classes. weights: None,
    "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    keras_file = (f"inception_v3_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", "inception_v3")
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, default_size=299,
                                     min_size=75, imagenet_file=keras_file)
    x = conv2d_bn(img_input, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _module_35(x, pool_filters, f"mixed{i}")
    # mixed3: strided 3x3, strided double 3x3 and max-pooled branches
    branch3x3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=3, name="mixed3")
    for i, filters in enumerate((128, 160, 160, 192)):
        x = _module_17(x, filters, f"mixed{4 + i}")
    # mixed8: strided 3x3, strided 7x7x3 and max-pooled branches
    branch3x3 = conv2d_bn(x, 192, 1, 1)
    branch3x3 = conv2d_bn(branch3x3, 320, 3, 3, strides=(2, 2), padding="valid")
    branch7x7x3 = conv2d_bn(x, 192, 1, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 1, 7)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 7, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=3, name="mixed8")
    for i in range(2):
        x = _module_8(x, i)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation,
                            pool_names=("avg_pool", None) if include_top else (None, None))
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["InceptionV3", "preprocess_input", "decode_predictions"]
