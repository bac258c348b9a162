"""Reference CIFAR-10 models, returned uncompiled (call model.compile yourself).

    keras_cnn()    Keras's classic examples/cifar10_cnn.py network (4 convolutions, 1.25M weights)
    tf_tutorial()  the network of TensorFlow's CIFAR-10 tutorial, on 24x24 crops
    resnet20()     He et al. (2015)'s CIFAR ResNet-20 (0.27M weights)
    airbench94()   Keller Jordan's airbench94 network (2024; 1.97M weights), trained by
                   minidl.recipes.Airbench94 to 94% in about 10 epochs
    mobilenet_v2() Keras's applications.MobileNetV2 on 32x32 images (2.27M weights at alpha 1)
    binarynet()    BinaryNet / FINN's "CNV" with larq's layers: binary weights and activations
                   (1.54M weights), the first layer's input and the last layer kept as larq keeps them

The active backend (minidl.set_backend) is the one the models are built on.
"""

from . import applications, layers
from .models import Model, Sequential

MODELS = ("keras_cnn", "tf_tutorial", "resnet20", "airbench94", "mobilenet_v2", "binarynet")


def keras_cnn(input_shape=(32, 32, 3), num_classes=10):
    """Keras's cifar10_cnn example: two conv-conv-pool-dropout stages, then a 512-unit layer."""
    return Sequential([
        layers.Input(input_shape),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ], name="keras_cnn")


def tf_tutorial(input_shape=(24, 24, 3), num_classes=10):
    """TensorFlow's CIFAR-10 tutorial network (cifar10.py of the old models repository).

    It trains on random 24x24 crops of the 32x32 images and tests on the centre crop
    (minidl.data.Augment(crop=(24, 24), flip=True) and its for_evaluation()). The tutorial's
    local response normalization layers are replaced by BatchNormalization, which minidl has
    and LRN is not: same places, after the first pooling and after the second convolution.
    """
    return Sequential([
        layers.Input(input_shape),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.BatchNormalization(),
        layers.Conv2D(64, 5, padding="same", activation="relu"),
        layers.BatchNormalization(),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Flatten(),
        layers.Dense(384, activation="relu"),
        layers.Dense(192, activation="relu"),
        layers.Dense(num_classes, activation="softmax"),
    ], name="tf_tutorial")


def _conv_bn(x, filters, kernel_size, strides=1):
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding="same", use_bias=False,
                      kernel_initializer="he_normal")(x)
    return layers.BatchNormalization()(x)


def _basic_block(x, filters, strides):
    """conv3x3-BN-ReLU-conv3x3-BN plus the shortcut, then ReLU."""
    y = _conv_bn(x, filters, 3, strides)
    y = layers.Activation("relu")(y)
    y = _conv_bn(y, filters, 3)
    shortcut = x
    if strides != 1 or x.shape[-1] != filters:
        shortcut = _conv_bn(x, filters, 1, strides)  # projection where the shape changes
    y = layers.Add()([y, shortcut])
    return layers.Activation("relu")(y)


def resnet20(input_shape=(32, 32, 3), num_classes=10, blocks_per_stage=3):
    """He et al. (2015), "Deep Residual Learning for Image Recognition", section 4.2.

    A 3x3 convolution with 16 filters, three stages of `blocks_per_stage` basic blocks with
    16, 32 and 64 filters (the second and third start with stride 2), global average pooling
    and a softmax layer: 6 * blocks_per_stage + 2 layers (20 for 3). Shortcuts are identities,
    except the two where the shape changes: those are 1x1 convolutions with stride 2 followed by
    BatchNormalization (option B of the paper, as in Keras's ResNet examples), not option A's
    zero-padded identity. Convolutions have no bias (BatchNormalization follows each) and
    He-normal initial weights.
    """
    inputs = layers.Input(input_shape)
    x = layers.Activation("relu")(_conv_bn(inputs, 16, 3))
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(blocks_per_stage):
            x = _basic_block(x, filters, strides=2 if stage > 0 and block == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(num_classes, activation="softmax", kernel_initializer="he_normal")(x)
    return Model(inputs, outputs, name=f"resnet{6 * blocks_per_stage + 2}")


def _conv_group(x, filters, momentum, group):
    """airbench's ConvGroup: conv 3x3 -> max-pool 2 -> BN -> GELU -> conv 3x3 -> BN -> GELU.
    BatchNormalization without a learned scale; identity-initialized bias-free convolutions."""
    def norm(x, index):
        return layers.BatchNormalization(momentum=momentum, epsilon=1e-12, scale=False,
                                         name=f"group{group}_norm{index}")(x)

    x = layers.Conv2D(filters, 3, padding="same", use_bias=False, kernel_initializer="dirac",
                      name=f"group{group}_conv1")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Activation("gelu")(norm(x, 1))
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False, kernel_initializer="dirac",
                      name=f"group{group}_conv2")(x)
    return layers.Activation("gelu")(norm(x, 2))


def airbench94(input_shape=(32, 32, 3), num_classes=10, widths=(64, 256, 256), batchnorm_momentum=0.6,
               scaling_factor=1 / 9):
    """Keller Jordan's airbench94 (arXiv 2404.00498): a 2x2 convolution "whiten" with
    2 * 12 filters (fitted to the data by minidl.recipes.Airbench94.whiten, frozen) and GELU,
    three conv groups of `widths`, max-pool 3, a bias-free Dense and a fixed output scale.
    Its outputs are logits (train with from_logits=True). BatchNormalization momentum 0.6 is
    Keras's (PyTorch's 0.4)."""
    inputs = layers.Input(input_shape)
    channels = input_shape[-1]
    x = layers.Conv2D(2 * 4 * channels, 2, padding="valid", activation="gelu",
                      kernel_initializer="zeros", name="whiten")(inputs)
    for group, filters in enumerate(widths, start=1):
        x = _conv_group(x, filters, batchnorm_momentum, group)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Flatten()(x)
    # airbench's head keeps PyTorch's default Linear draw, uniform(+-1/sqrt(fan_in)) (+-1/16)
    x = layers.Dense(num_classes, use_bias=False, kernel_initializer="torch_uniform", name="head")(x)
    outputs = layers.Rescaling(scaling_factor, name="scale")(x)
    return Model(inputs, outputs, name="airbench94")


def mobilenet_v2(input_shape=(32, 32, 3), num_classes=10, alpha=1.0):
    """keras.applications.MobileNetV2(weights=None) for CIFAR-10-sized images: the ImageNet
    network unchanged (its five stride-2 steps leave 1x1 maps at 32x32), alpha its width."""
    return applications.MobileNetV2(input_shape=input_shape, alpha=alpha, weights=None,
                                    classes=num_classes)


def binarynet(input_shape=(32, 32, 3), num_classes=10, binary=True):
    """BinaryNet (Courbariaux et al. 2016) in FINN's CNV size: 3 x 3 'valid' convolutions
    64-64-pool-128-128-pool-256-256, dense 512-512-classes, BatchNormalization after each. As
    larq's BinaryNet example: the first convolution sees the float image (binary kernel only),
    every later layer binarizes its input and kernel (ste_sign, WeightClip on the latent
    weights), and a BatchNormalization then softmax read the last layer's integer sums.
    binary=False gives the float twin of the same shape (Conv2D / Dense, ReLU after each BN)."""
    from . import larq as lq
    signs = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip",
                 use_bias=False)

    def conv(filters, first=False):
        if not binary:
            return [layers.Conv2D(filters, 3, use_bias=False)]
        options = dict(signs, input_quantizer=None) if first else signs
        return [lq.layers.QuantConv2D(filters, 3, **options)]

    def norm():
        bn = [layers.BatchNormalization(momentum=0.9, epsilon=1e-4, scale=False)]
        return bn if binary else bn + [layers.Activation("relu")]

    def dense(units):
        return [lq.layers.QuantDense(units, **signs) if binary else layers.Dense(units, use_bias=False)]

    stack = [layers.Input(input_shape)]
    stack += conv(64, first=True) + norm() + conv(64) + [layers.MaxPooling2D(2)] + norm()
    stack += conv(128) + norm() + conv(128) + [layers.MaxPooling2D(2)] + norm()
    stack += conv(256) + norm() + conv(256) + norm() + [layers.Flatten()]
    stack += dense(512) + norm() + dense(512) + norm() + dense(num_classes)
    stack += [layers.BatchNormalization(momentum=0.9, epsilon=1e-4, scale=False), layers.Activation("softmax")]
    return Sequential(stack, name="binarynet" if binary else "binarynet_float")


def build(name, **kwargs):
    """The model called `name` (one of MODELS)."""
    builders = {"keras_cnn": keras_cnn, "tf_tutorial": tf_tutorial, "resnet20": resnet20,
                "airbench94": airbench94, "mobilenet_v2": mobilenet_v2, "binarynet": binarynet}
    if name not in builders:
        raise ValueError(f"zoo.build: unknown model {name!r}; choose one of {list(MODELS)}")
    return builders[name](**kwargs)
