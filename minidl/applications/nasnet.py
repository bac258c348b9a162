"""NASNetMobile and NASNetLarge (Zoph et al. 2018, "Learning Transferable Architectures for
Scalable Image Recognition"), as keras.applications.nasnet builds them: a stem, then normal
and reduction cells found by architecture search, each combining the previous two cells'
outputs (p, ip) through separable-convolution and pooling branches."""

from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions

BN = {"axis": -1, "momentum": 0.9997, "epsilon": 1e-3}


def _bn(x, name=None):
    return layers.BatchNormalization(name=name, **BN)(x)


def _conv1x1(x, filters, name):
    return layers.Conv2D(filters, (1, 1), strides=(1, 1), padding="same", use_bias=False,
                         kernel_initializer="he_normal", name=name)(x)


def _separable_conv_block(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """ReLU, separable convolution (stride), BN, ReLU, separable convolution, BN."""
    x = layers.Activation("relu")(ip)
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x.shape[1:], kernel_size),
                                 name=f"separable_conv_1_pad_{block_id}")(x)
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides,
                               name=f"separable_conv_1_{block_id}",
                               padding="valid" if strides == (2, 2) else "same",
                               use_bias=False)(x)
    x = _bn(x, f"separable_conv_1_bn_{block_id}")
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}",
                               padding="same", use_bias=False)(x)
    return _bn(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p, ip, filters, block_id=None):
    """The previous cell's output p matched to ip: halved (two offset 1x1 stride-2 paths) when
    ip is smaller, projected by a 1x1 convolution when its channels differ."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                     name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False,
                           name=f"adjust_conv_1_{block_id}", kernel_initializer="he_normal")(p1)
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                     name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False,
                           name=f"adjust_conv_2_{block_id}", kernel_initializer="he_normal")(p2)
        p = layers.concatenate([p1, p2], axis=-1)
        return _bn(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _bn(p, f"adjust_bn_{block_id}")
    return p


def _normal_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _conv1x1(h, filters, f"normal_conv_1_{block_id}")
    h = _bn(h, f"normal_bn_1_{block_id}")
    x1_1 = _separable_conv_block(h, filters, kernel_size=(5, 5),
                                 block_id=f"normal_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"normal_add_1_{block_id}")
    x2_1 = _separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}")
    x2_2 = _separable_conv_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"normal_add_2_{block_id}")
    x3 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                 name=f"normal_left3_{block_id}")(h)
    x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
    x4_1 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                   name=f"normal_left4_{block_id}")(p)
    x4_2 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                   name=f"normal_right4_{block_id}")(p)
    x4 = layers.add([x4_1, x4_2], name=f"normal_add_4_{block_id}")
    x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
    x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _conv1x1(h, filters, f"reduction_conv_1_{block_id}")
    h = _bn(h, f"reduction_bn_1_{block_id}")
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h.shape[1:], 3),
                              name=f"reduction_pad_1_{block_id}")(h)
    x1_1 = _separable_conv_block(h, filters, (5, 5), strides=(2, 2),
                                 block_id=f"reduction_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                 block_id=f"reduction_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"reduction_add_1_{block_id}")
    x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                               name=f"reduction_left2_{block_id}")(h3)
    x2_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                 block_id=f"reduction_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
    x3_1 = layers.AveragePooling2D((3, 3), strides=(2, 2), padding="valid",
                                   name=f"reduction_left3_{block_id}")(h3)
    x3_2 = _separable_conv_block(p, filters, (5, 5), strides=(2, 2),
                                 block_id=f"reduction_right3_{block_id}")
    x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
    x4 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                 name=f"reduction_left4_{block_id}")(x1)
    x4 = layers.add([x2, x4])
    x5_1 = _separable_conv_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")
    x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                               name=f"reduction_right5_{block_id}")(h3)
    x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(input_shape=None, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,
           skip_reduction=True, filter_multiplier=2, include_top=True, weights="imagenet",
           input_tensor=None, pooling=None, classes=1000, default_size=None,
           classifier_activation="softmax", name="NASNet"):
    """The NASNet builder: 3 * num_blocks normal cells between two reduction cells each, with
    penultimate_filters // 24 filters in the first normal cells."""
    owner = f"applications.{name}"
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError(f"{owner}: weights='imagenet' needs a static input_shape, got "
                         f"{input_shape!r}")
    if penultimate_filters % (24 * (filter_multiplier ** 2)) != 0:
        raise ValueError(f"{owner}: penultimate_filters must be a multiple of 24 * "
                         f"filter_multiplier ** 2 = {24 * filter_multiplier ** 2}, got "
                         f"{penultimate_filters}")
    default_size = 331 if default_size is None else default_size
    mobile = default_size == 224
    keras_file = (f"NASNet-{'mobile' if mobile else 'large'}"
                  f"{'' if include_top else '-no-top'}.h5", "nasnet")
    img_input = imagenet_utils.start(owner, weights, include_top, input_tensor, input_shape,
                                     pooling, classes, default_size=default_size,
                                     imagenet_file=keras_file)
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid",
                      use_bias=False, name="stem_conv1", kernel_initializer="he_normal")(img_input)
    x = _bn(x, "stem_bn1")
    p = None
    x, p = _reduction_a_cell(x, p, filters // (filter_multiplier ** 2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters, block_id=f"{i}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier,
                              block_id=f"reduce_{num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier,
                              block_id=f"{num_blocks + i + 1}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier ** 2,
                              block_id=f"reduce_{2 * num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier ** 2,
                              block_id=f"{2 * num_blocks + i + 1}")
    x = layers.Activation("relu")(x)
    x = imagenet_utils.head(x, include_top, pooling, classes, classifier_activation)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights, keras_file)


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                 pooling=None, classes=1000, classifier_activation="softmax",
                 name="nasnet_mobile"):
    """keras.applications.NASNetMobile: 5.3M weights, 224x224 by default. weights: None,
    "imagenet" (Keras's published file, from Keras's cache folder) or a weights file."""
    if not include_top and input_shape is None and input_tensor is None:
        input_shape = (224, 224, 3)      # Keras's: the cells need a known size
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32,
                  skip_reduction=False, filter_multiplier=2, include_top=include_top,
                  weights=weights, input_tensor=input_tensor, pooling=pooling, classes=classes,
                  default_size=224, classifier_activation=classifier_activation, name=name)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                pooling=None, classes=1000, classifier_activation="softmax",
                name="nasnet_large"):
    """keras.applications.NASNetLarge: 88.9M weights, 331x331 by default."""
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96,
                  skip_reduction=True, filter_multiplier=2, include_top=include_top,
                  weights=weights, input_tensor=input_tensor, pooling=pooling, classes=classes,
                  default_size=331, classifier_activation=classifier_activation, name=name)


def preprocess_input(x, data_format=None):
    """Keras's 'tf' preprocessing: pixels in [0, 255] to [-1, 1] (a new array)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


__all__ = ["NASNetMobile", "NASNetLarge", "preprocess_input", "decode_predictions"]
