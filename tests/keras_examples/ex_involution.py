"""Corpus example: involutional neural networks.

Modeled on keras-team/keras-io examples/vision/involution.py (commit b8bb4c0): a custom
Involution layer whose build(input_shape) creates its sublayers (an AveragePooling2D(pool_size,
strides, padding="same") when strided, a kernel-generating Sequential of Conv2D(kernel_size=1) /
BatchNormalization / ReLU / Conv2D built by its first call, three Reshape layers) and whose call
multiplies the generated kernels with the input patches (extract_patches with strides and
padding "same"), sums over the kernel window and returns two tensors (output, kernel); the layer
tried eagerly on random normal images with stride 1, stride 2 and a channel / reduction ratio
change; a Sequential convnet (Conv2D(padding="same", input_shape=...) / ReLU(name=...) /
MaxPooling2D / Flatten / Dense) and a functional involution model (Model(inputs=[inputs],
outputs=[outputs], name=...)) unpacking the layer's two outputs, both compiled with "adam",
SparseCategoricalCrossentropy(from_logits=True) and ["accuracy"], fit with validation_data,
summary(); then a model built from inv_model.input and get_layer(name).output of the three
involution layers, whose predicted kernels are summed over their last three axes. Written anew
for minidl's corpus with the same Keras 3 API; what differs: tf.image.extract_patches /
tf.multiply / tf.reduce_sum / tf.random.normal / tf.identity become ops.image.extract_patches,
ops.multiply, ops.sum, keras.random.normal and a lambda (as the Keras 3 port spells them);
synthetic 3-channel digit images (16 x 16, labels shaped (n, 1) as CIFAR-10's, pixels / 255.0
in float64 as the original's) in place of CIFAR-10, the tf.data pipeline replaced by arrays with
batch_size=256, 3 epochs, 32 x 32 test images in place of 256 x 256, no plots."""

import numpy as np

import minidl as keras
from minidl import ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Involution(keras.layers.Layer):
    def __init__(self, channel, group_number, kernel_size, stride, reduction_ratio, name):
        super().__init__(name=name)
        self.channel = channel
        self.group_number = group_number
        self.kernel_size = kernel_size
        self.stride = stride
        self.reduction_ratio = reduction_ratio

    def build(self, input_shape):
        (_, height, width, num_channels) = input_shape
        height, width = height // self.stride, width // self.stride
        # the kernels are generated from the (strided) input itself: location-specific
        self.stride_layer = (
            keras.layers.AveragePooling2D(pool_size=self.stride, strides=self.stride, padding="same")
            if self.stride > 1 else (lambda x: x))
        self.kernel_gen = keras.Sequential([
            keras.layers.Conv2D(filters=self.channel // self.reduction_ratio, kernel_size=1),
            keras.layers.BatchNormalization(),
            keras.layers.ReLU(),
            keras.layers.Conv2D(filters=self.kernel_size * self.kernel_size * self.group_number,
                                kernel_size=1),
        ])
        k2 = self.kernel_size * self.kernel_size
        self.kernel_reshape = keras.layers.Reshape(target_shape=(height, width, k2, 1, self.group_number))
        self.input_patches_reshape = keras.layers.Reshape(
            target_shape=(height, width, k2, num_channels // self.group_number, self.group_number))
        self.output_reshape = keras.layers.Reshape(target_shape=(height, width, num_channels))

    def call(self, x):
        kernel = self.kernel_gen(self.stride_layer(x))               # B, H, W, K*K*G
        kernel = self.kernel_reshape(kernel)                         # B, H, W, K*K, 1, G
        input_patches = ops.image.extract_patches(x, size=self.kernel_size, strides=self.stride,
                                                  padding="same")    # B, H, W, K*K*C
        input_patches = self.input_patches_reshape(input_patches)   # B, H, W, K*K, C//G, G
        output = ops.multiply(kernel, input_patches)
        output = ops.sum(output, axis=3)                            # B, H, W, C//G, G
        output = self.output_reshape(output)                        # B, H, W, C
        return output, kernel


input_tensor = keras.random.normal((4, 32, 32, 3))
output_tensor, _ = Involution(channel=3, group_number=1, kernel_size=5, stride=1, reduction_ratio=1,
                              name="inv_1")(input_tensor)
assert tuple(output_tensor.shape) == (4, 32, 32, 3), output_tensor.shape
output_tensor, kernel = Involution(channel=3, group_number=1, kernel_size=5, stride=2, reduction_ratio=1,
                                   name="inv_2")(input_tensor)
assert tuple(output_tensor.shape) == (4, 16, 16, 3), output_tensor.shape
assert tuple(kernel.shape) == (4, 16, 16, 25, 1, 1), kernel.shape
output_tensor, _ = Involution(channel=16, group_number=1, kernel_size=5, stride=1, reduction_ratio=2,
                              name="inv_3")(input_tensor)
assert tuple(output_tensor.shape) == (4, 32, 32, 3), output_tensor.shape


def cifar_like(n, seed):
    x, y = digits(n, seed, size=16)
    return np.repeat(x[..., None], 3, axis=-1), y.reshape(-1, 1)


(train_images, train_labels), (test_images, test_labels) = cifar_like(600, 1), cifar_like(200, 2)
train_images, test_images = train_images / 255.0, test_images / 255.0      # float64, as the original's

conv_model = keras.Sequential([
    keras.layers.Conv2D(32, (3, 3), input_shape=(16, 16, 3), padding="same"),
    keras.layers.ReLU(name="relu1"),
    keras.layers.MaxPooling2D((2, 2)),
    keras.layers.Conv2D(64, (3, 3), padding="same"),
    keras.layers.ReLU(name="relu2"),
    keras.layers.MaxPooling2D((2, 2)),
    keras.layers.Conv2D(64, (3, 3), padding="same"),
    keras.layers.ReLU(name="relu3"),
    keras.layers.Flatten(),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10),
])
conv_model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                   metrics=["accuracy"])
conv_hist = conv_model.fit(train_images, train_labels, batch_size=256, epochs=3,
                           validation_data=(test_images, test_labels), verbose=0)

inputs = keras.Input(shape=(16, 16, 3))
x, _ = Involution(channel=3, group_number=1, kernel_size=3, stride=1, reduction_ratio=2, name="inv_1")(inputs)
x = keras.layers.ReLU()(x)
x = keras.layers.MaxPooling2D((2, 2))(x)
x, _ = Involution(channel=3, group_number=1, kernel_size=3, stride=1, reduction_ratio=2, name="inv_2")(x)
x = keras.layers.ReLU()(x)
x = keras.layers.MaxPooling2D((2, 2))(x)
x, _ = Involution(channel=3, group_number=1, kernel_size=3, stride=1, reduction_ratio=2, name="inv_3")(x)
x = keras.layers.ReLU()(x)
x = keras.layers.Flatten()(x)
x = keras.layers.Dense(64, activation="relu")(x)
outputs = keras.layers.Dense(10)(x)
inv_model = keras.Model(inputs=[inputs], outputs=[outputs], name="inv_model")
inv_model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
inv_hist = inv_model.fit(train_images, train_labels, batch_size=256, epochs=3,
                         validation_data=(test_images, test_labels), verbose=0)

conv_model.summary()
inv_model.summary()
for hist in (conv_hist, inv_hist):
    assert set(hist.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}, hist.history.keys()
    assert hist.history["loss"][-1] < hist.history["loss"][0], hist.history["loss"]
print("conv", conv_hist.history["val_accuracy"], "inv", inv_hist.history["val_accuracy"])
assert conv_hist.history["val_accuracy"][-1] > 0.3, conv_hist.history        # chance is 0.1
assert inv_model.count_params() < conv_model.count_params() / 10             # the original's point

layer_names = ["inv_1", "inv_2", "inv_3"]
outputs = [inv_model.get_layer(name).output for name in layer_names]
vis_model = keras.Model(inv_model.input, outputs)
(inv1_out, inv2_out, inv3_out) = vis_model.predict(test_images[:1], verbose=0)
sizes = []
for out in (inv1_out, inv2_out, inv3_out):
    _, inv_kernel = out
    summed = ops.convert_to_numpy(ops.sum(inv_kernel, axis=[-1, -2, -3]))
    sizes.append(summed.shape)
assert sizes == [(1, 16, 16), (1, 8, 8), (1, 4, 4)], sizes
