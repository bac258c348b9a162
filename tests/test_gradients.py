"""Finite-difference gradient checks, in float64 on the numpy backend, for every layer and loss."""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends.numpy_backend import NumpyBackend
from minidl.models import Model
from layer_runs import LayerRun

EPS = 1e-6


@pytest.fixture(autouse=True)
def float64_backend():
    backend = NumpyBackend(dtype="float64")
    minidl.set_backend(backend)
    minidl.set_seed(1)
    yield backend
    minidl.set_backend("numpy")


def numeric_grad(f, array, rng, count=12):
    """Central differences of scalar f() w.r.t. `count` random entries of array (in place)."""
    flat = array.reshape(-1)
    idx = rng.choice(flat.size, size=min(count, flat.size), replace=False)
    grads = []
    for i in idx:
        old = flat[i]
        flat[i] = old + EPS
        up = f()
        flat[i] = old - EPS
        down = f()
        flat[i] = old
        grads.append((up - down) / (2 * EPS))
    return idx, np.array(grads)


def check_layer(layer, input_shapes, training=True, batch=2, seed=0):
    backend = minidl.get_backend()
    rng = np.random.default_rng(seed)
    multi = isinstance(input_shapes, list)
    shapes = input_shapes if multi else [input_shapes]
    layer.build_once([tuple(s) for s in shapes] if multi else tuple(shapes[0]))
    layer.attach(backend)
    for w in layer.weights:  # non-trivial values so every weight matters (variances > 0)
        w.value[...] = rng.normal(size=w.shape) * 0.3 + (1.0 if w.name.endswith("variance") else 0.0)
    xs = [rng.normal(size=(batch,) + tuple(s)) for s in shapes]
    r = rng.normal(size=(batch,) + layer.output_shape)
    run = LayerRun(layer)

    def f():
        out = run.forward(xs if multi else xs[0], training)
        return float(np.sum(out * r))

    f()
    dxs = run.backward(r)
    dxs = dxs if multi else [dxs]
    dxs = [np.array(d) for d in dxs]  # copy: later forwards reuse the layer's buffers
    grads = {w.name: np.array(w.grad) for w in layer.trainable_weights}
    for x, dx in zip(xs, dxs):
        idx, num = numeric_grad(f, x, rng)
        np.testing.assert_allclose(dx.reshape(-1)[idx], num, rtol=1e-5, atol=1e-7)
    for w in layer.trainable_weights:
        idx, num = numeric_grad(f, w.value, rng)
        np.testing.assert_allclose(grads[w.name].reshape(-1)[idx], num, rtol=1e-5, atol=1e-7,
                                   err_msg=f"gradient of {w.name}")


@pytest.mark.parametrize("activation", ["linear", "relu", "sigmoid", "tanh", "softmax"])
def test_dense(activation):
    check_layer(layers.Dense(5, activation=activation), (7,))


def test_dense_on_rank3_input():
    check_layer(layers.Dense(3, use_bias=False), (4, 6))


@pytest.mark.parametrize("kernel,strides,padding,shape", [
    (3, 1, "same", (6, 5, 2)), (3, 2, "same", (7, 6, 3)), (2, 2, "same", (5, 5, 2)),
    (3, 1, "valid", (5, 6, 2)), (1, 1, "valid", (4, 4, 3)), ((5, 3), (2, 1), "same", (7, 5, 2)),
])
def test_conv2d(kernel, strides, padding, shape):
    check_layer(layers.Conv2D(4, kernel, strides=strides, padding=padding, activation="tanh"), shape)


def test_conv2d_without_bias():
    check_layer(layers.Conv2D(3, 3, padding="same", use_bias=False), (5, 5, 2))


@pytest.mark.parametrize("kernel,padding,dilation,groups,shape", [
    (3, "same", 2, 1, (7, 6, 2)), ((3, 2), "valid", (2, 1), 1, (8, 6, 3)), (3, "same", 1, 2, (5, 5, 4)),
    (2, "valid", 1, 4, (5, 6, 4)), (3, "same", 2, 2, (6, 7, 6)),
])
def test_conv2d_dilated_and_grouped(kernel, padding, dilation, groups, shape):
    check_layer(layers.Conv2D(4, kernel, padding=padding, dilation_rate=dilation, groups=groups,
                              activation="tanh"), shape)


@pytest.mark.parametrize("kernel,strides,padding,output_padding,dilation,shape", [
    (3, 2, "same", None, 1, (4, 3, 2)), (3, 2, "valid", None, 1, (3, 4, 2)), (4, 2, "same", None, 1, (3, 3, 3)),
    (3, 2, "same", 1, 1, (3, 3, 2)), ((3, 2), (3, 2), "valid", (2, 1), 1, (3, 3, 2)), (1, 2, "valid", None, 1, (3, 3, 2)),
    (3, 1, "same", None, 2, (5, 4, 2)), (2, 1, "valid", None, (2, 1), (3, 4, 3)),
])
def test_conv2d_transpose(kernel, strides, padding, output_padding, dilation, shape):
    check_layer(layers.Conv2DTranspose(3, kernel, strides=strides, padding=padding, output_padding=output_padding,
                                       dilation_rate=dilation, activation="tanh"), shape)


def test_conv2d_transpose_without_bias():
    check_layer(layers.Conv2DTranspose(2, 3, strides=2, padding="same", use_bias=False), (3, 3, 2))


@pytest.mark.parametrize("size,interpolation", [((2, 2), "nearest"), ((2, 3), "nearest"), ((2, 2), "bilinear"),
                                                ((3, 2), "bilinear"), ((1, 4), "bilinear")])
def test_upsampling2d(size, interpolation):
    check_layer(layers.UpSampling2D(size, interpolation=interpolation), (3, 4, 2))


@pytest.mark.parametrize("cls", [layers.MaxPooling2D, layers.AveragePooling2D])
@pytest.mark.parametrize("pool,strides,padding", [(2, None, "valid"), (3, 2, "same"), (2, 1, "same"),
                                                  (3, 2, "valid")])
def test_pooling(cls, pool, strides, padding):
    check_layer(cls(pool, strides=strides, padding=padding), (7, 6, 3))


def test_global_average_pooling():
    check_layer(layers.GlobalAveragePooling2D(), (4, 5, 3))


def test_batch_normalization():
    check_layer(layers.BatchNormalization(), (3, 4, 5), batch=4)


def test_frozen_batch_normalization_uses_moving_statistics():
    check_layer(layers.BatchNormalization(trainable=False), (3, 4, 5), training=True, batch=4)


def test_batch_normalization_dense():
    check_layer(layers.BatchNormalization(), (6,), batch=5)


@pytest.mark.parametrize("layer", [
    lambda: layers.Activation("relu"), lambda: layers.Activation("softmax"),
    lambda: layers.ReLU(), lambda: layers.LeakyReLU(0.2), lambda: layers.ReLU(negative_slope=0.1),
    lambda: layers.Flatten(), lambda: layers.Reshape((-1, 3)), lambda: layers.Dropout(0.4),
    lambda: layers.ZeroPadding2D(((1, 2), (0, 1))),
])
def test_shape_and_activation_layers(layer):
    check_layer(layer(), (4, 3, 3))


NEW_ACTIVATIONS = ["gelu", "gelu_approximate", "silu", "swish", "elu", "selu", "softplus", "softsign",
                   "hard_sigmoid", "hard_silu", "hard_swish", "mish", "exponential", "relu6",
                   "leaky_relu"]


@pytest.mark.parametrize("activation", NEW_ACTIVATIONS)
def test_dense_with_each_new_activation(activation):
    # inputs scaled so that hard_sigmoid, hard_silu and relu6 see both their flat and sloped parts
    check_layer(layers.Dense(6, activation=activation), (5,), batch=4)
    check_layer(layers.Activation(activation), (3, 7), batch=3, seed=1)


@pytest.mark.parametrize("layer,shape", [
    (lambda: layers.ELU(), (4, 3)), (lambda: layers.ELU(alpha=0.5), (6,)),
    (lambda: layers.Softmax(), (3, 5)), (lambda: layers.Softmax(axis=2), (3, 5)),
    (lambda: layers.GlobalMaxPooling2D(), (4, 5, 3)), (lambda: layers.GlobalMaxPooling2D(keepdims=True), (3, 2, 2)),
    (lambda: layers.Cropping2D(((1, 0), (2, 1))), (4, 5, 2)), (lambda: layers.Cropping2D(1), (4, 4, 3)),
    (lambda: layers.RepeatVector(3), (5,)), (lambda: layers.RepeatVector(1), (4,)),
    (lambda: layers.BatchNormalization(center=False, scale=False), (3, 4)),
    (lambda: layers.BatchNormalization(scale=False), (2, 2, 3)),
    (lambda: layers.BatchNormalization(center=False, axis=3), (2, 2, 3)),
    (lambda: layers.Dense(3, activation="gelu"), (2, 3, 4)),
    (lambda: layers.LayerNormalization(), (7,)), (lambda: layers.LayerNormalization(), (2, 3, 5)),
    (lambda: layers.LayerNormalization(center=False, scale=False, epsilon=1e-2), (6,)),
    (lambda: layers.LayerNormalization(scale=False, axis=[3]), (2, 2, 4)),
    (lambda: layers.PReLU(alpha_initializer="ones"), (3, 4)), (lambda: layers.PReLU(shared_axes=[1, 2]), (3, 3, 2)),
    (lambda: layers.PReLU(shared_axes=1), (3, 4)),
    (lambda: layers.Permute((2, 1)), (3, 4)), (lambda: layers.Permute((3, 1, 2)), (2, 3, 4)),
    (lambda: layers.Softmax(axis=1), (3, 4)), (lambda: layers.Softmax(axis=-2), (2, 3, 4)),
    (lambda: layers.GaussianNoise(0.5), (3, 4)), (lambda: layers.SpatialDropout2D(0.5), (3, 3, 4)),
])
def test_new_layers(layer, shape):
    check_layer(layer(), shape, batch=3)


def test_dropout_inference_is_identity():
    check_layer(layers.Dropout(0.5), (6,), training=False)


def test_add_and_concatenate():
    check_layer(layers.Add(), [(3, 3, 2), (3, 3, 2), (3, 3, 2)])
    check_layer(layers.Concatenate(), [(3, 3, 2), (3, 3, 4)])


# ------------------------------------------------------------------ losses
LOSS_CASES = [
    ("sparse_categorical_crossentropy", "softmax", False),
    ("categorical_crossentropy", "softmax", False),
    ("sparse_categorical_crossentropy", "linear", True),
    ("categorical_crossentropy", "linear", True),
    ("categorical_crossentropy", "sigmoid", False),  # not fused: plain clipped cross-entropy
    ("binary_crossentropy", "sigmoid", False),
    ("binary_crossentropy", "linear", True),
    ("binary_crossentropy", "tanh", False),  # plain binary cross-entropy on probabilities
    ("mean_squared_error", "linear", False),
]


def targets_for(loss, rng, n, k):
    if loss.startswith("sparse"):
        return rng.integers(0, k, size=n)
    if loss == "categorical_crossentropy":
        return np.eye(k)[rng.integers(0, k, size=n)]
    if loss == "binary_crossentropy":
        return rng.integers(0, 2, size=(n, k)).astype(float)
    return rng.normal(size=(n, k))


@pytest.mark.parametrize("loss,activation,from_logits", LOSS_CASES)
def test_loss_gradients(loss, activation, from_logits):
    rng = np.random.default_rng(3)
    inp = layers.Input((6,))
    dense = layers.Dense(4, activation=activation)
    model = Model(inp, dense(inp))
    loss_obj = minidl.losses.get(loss)
    loss_obj.from_logits = from_logits
    model.compile(optimizer="sgd", loss=loss_obj)
    x = rng.normal(size=(5, 6))
    y = targets_for(loss, rng, 5, 4)
    if activation == "tanh":  # keep probabilities inside (0, 1)
        dense.kernel.value[...] *= 0.1
    _, yp = model._validate_xy(x, y)
    xb = np.asarray(x, dtype=np.float64)

    def total_loss():
        model.reset_metrics()
        model._test_step([xb], yp)
        return model._metric_values()["loss"]

    # analytic gradient: one training step's backward, without applying the update
    model._gradients([xb], yp)
    analytic = np.array(dense.kernel.grad)
    idx, num = numeric_grad(total_loss, dense.kernel.value, rng, count=24)
    np.testing.assert_allclose(analytic.reshape(-1)[idx], num, rtol=1e-5, atol=1e-8)


def test_residual_graph_gradient_accumulates():
    rng = np.random.default_rng(4)
    inp = layers.Input((5,))
    h = layers.Dense(5, activation="tanh")(inp)
    a = layers.Dense(5, activation="tanh")(h)
    s = layers.Add()([h, a])
    out_layer = layers.Dense(1)
    model = Model(inp, out_layer(s))
    model.compile(optimizer="sgd", loss="mse")
    x, y = rng.normal(size=(4, 5)), rng.normal(size=(4, 1))
    first = model.layers[1]

    def total_loss():
        model.reset_metrics()
        model._test_step([x], [y.astype(np.float32)])
        return model._metric_values()["loss"]

    model._gradients([x], [y.astype(np.float32)])
    analytic = np.array(first.kernel.grad)
    idx, num = numeric_grad(total_loss, first.kernel.value, rng, count=20)
    np.testing.assert_allclose(analytic.reshape(-1)[idx], num, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("kernel,strides,padding,multiplier,shape", [
    (3, 1, "same", 1, (6, 5, 3)), (3, 2, "same", 2, (7, 6, 3)), ((3, 2), (2, 1), "valid", 2, (7, 5, 2)),
    (1, 1, "valid", 3, (4, 4, 2)), (5, 2, "same", 1, (5, 7, 4)),
])
def test_depthwise_conv2d(kernel, strides, padding, multiplier, shape):
    check_layer(layers.DepthwiseConv2D(kernel, strides=strides, padding=padding,
                                       depth_multiplier=multiplier, activation="tanh"), shape)


@pytest.mark.parametrize("use_bias,multiplier", [(True, 1), (False, 2)])
def test_separable_conv2d(use_bias, multiplier):
    check_layer(layers.SeparableConv2D(4, 3, strides=2, padding="same", depth_multiplier=multiplier,
                                       use_bias=use_bias, activation="tanh"), (7, 6, 3))
