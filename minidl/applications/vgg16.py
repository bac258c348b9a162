"""VGG16 (Simonyan and Zisserman 2014, "Very Deep Convolutional Networks for Large-Scale Image
Recognition"), as keras.applications.vgg16 builds it: five blocks of 3x3 'same' convolutions
with ReLU, each closed by 2x2 max pooling, then (include_top) Flatten and two 4096-unit layers."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

BLOCKS = ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3))   # (filters, convolutions)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
          classes=1000, classifier_activation="softmax", name="vgg16"):
    """keras.applications.VGG16: 138.4M weights at 224x224 and 1000 classes (the classifier's
    Flatten makes its size depend on input_shape). weights: None, "imagenet" (Keras's
    published file, from Keras's cache folder) or a weights file."""
    return VGG(BLOCKS, "vgg16", include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation, name)


def VGG(blocks, family, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name):
    """The VGG family's builder: blocks are (filters, convolutions) of each of the five blocks;
    family names Keras's weights files ("vgg16", "vgg19")."""
    keras_file = (f"{family}_weights_tf_dim_ordering_tf_kernels"
                  f"{'' if include_top else '_notop'}.h5", family)
    img_input = imagenet_utils.start(f"applications.{name}", weights, include_top, input_tensor,
                                     input_shape, pooling, classes, imagenet_file=keras_file)
    x = img_input
    for block, (filters, convolutions) in enumerate(blocks, start=1):
        for conv in range(1, convolutions + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = imagenet_utils.classifier(x, classes, classifier_activation)
    else:
        x = imagenet_utils.head(x, False, pooling, classes, classifier_activation)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def preprocess_input(x, data_format=None):
    """Keras's 'caffe' preprocessing: RGB -> BGR, minus ImageNet's mean pixel (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


__all__ = ["VGG16", "preprocess_input", "decode_predictions"]
