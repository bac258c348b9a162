"""DepthwiseConv2D and SeparableConv2D: Keras 3's weights, shapes, config and errors; training on
every backend like the numpy reference; save and load; the cpu kernels against their reference
twins. (The ops are in tests/test_ops.py, the float64 gradient checks in tests/test_gradients.py.)
"""

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers
from minidl.backends.cpu._ffi import fptr, lib, window_struct
from minidl.backends.depthwise_geometry import depthwise_window
from minidl.models import Model, Sequential, load_model

from layer_runs import LayerRun

FAST_BACKENDS = [name for name in ("cpu", "opencl") if name in minidl.available_backends()]


@pytest.fixture
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def built(layer, shape):
    Sequential([layers.Input(shape), layer])
    return layer


# ------------------------------------------------------------ what Keras 3.15 does
# Keras: DepthwiseConv2D(3, depth_multiplier=2, padding="same", strides=2) on (2, 7, 9, 3) gives
# (2, 4, 5, 6) with weights kernel (3, 3, 3, 2) and bias (6,); SeparableConv2D(5, 3,
# depth_multiplier=2) gives (2, 5, 7, 5) with depthwise_kernel (3, 3, 3, 2), pointwise_kernel
# (1, 1, 6, 5), bias (5,).
def test_weight_names_layouts_and_output_shapes_are_keras_ones(numpy_backend):
    dw = built(layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", strides=2), (7, 9, 3))
    assert [(w.name, w.shape) for w in dw.weights] == [("kernel", (3, 3, 3, 2)), ("bias", (6,))]
    assert dw.output_shape == (4, 5, 6)
    sep = built(layers.SeparableConv2D(5, 3, depth_multiplier=2), (7, 9, 3))
    assert [(w.name, w.shape) for w in sep.weights] == [
        ("depthwise_kernel", (3, 3, 3, 2)), ("pointwise_kernel", (1, 1, 6, 5)), ("bias", (5,))]
    assert sep.output_shape == (5, 7, 5)
    assert dw.name.startswith("depthwise_conv2d") and sep.name.startswith("separable_conv2d")


def test_output_channel_c_times_m_plus_j_is_channel_c_with_filter_j(numpy_backend):
    layer = built(layers.DepthwiseConv2D(1, depth_multiplier=2, use_bias=False), (2, 2, 3))
    kernel = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 3, 2)
    layer.set_weights([kernel])
    x = np.array([10.0, 100.0, 1000.0], np.float32) * np.ones((1, 2, 2, 3), np.float32)
    y = minidl.get_backend().to_numpy(LayerRun(layer).forward(x, False))
    np.testing.assert_allclose(y[0, 0, 0], [10, 20, 300, 400, 5000, 6000])


def test_config_has_keras_keys_and_round_trips(numpy_backend):
    keras_keys = {"name", "trainable", "depth_multiplier", "kernel_size", "strides", "padding",
                  "data_format", "dilation_rate", "activation", "use_bias", "depthwise_initializer",
                  "bias_initializer", "depthwise_regularizer", "bias_regularizer",
                  "activity_regularizer", "depthwise_constraint", "bias_constraint"}
    dw = layers.DepthwiseConv2D((3, 2), strides=2, padding="same", depth_multiplier=3,
                                activation="relu", depthwise_regularizer="l2")
    assert set(dw.get_config()) == keras_keys
    again = layers.DepthwiseConv2D.from_config(dw.get_config())
    assert again.get_config() == dw.get_config()
    sep = layers.SeparableConv2D(4, 3, pointwise_constraint="non_neg", use_bias=False)
    assert set(sep.get_config()) == keras_keys | {"filters", "pointwise_initializer",
                                                  "pointwise_regularizer", "pointwise_constraint"}
    assert layers.SeparableConv2D.from_config(sep.get_config()).get_config() == sep.get_config()


@pytest.mark.parametrize("make,match", [
    (lambda: layers.DepthwiseConv2D(3, dilation_rate=2), "dilation_rate"),
    (lambda: layers.SeparableConv2D(4, 3, dilation_rate=(1, 2)), "dilation_rate"),
    (lambda: layers.DepthwiseConv2D(3, data_format="channels_first"), "data_format"),
    (lambda: layers.DepthwiseConv2D(0), "kernel_size"),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=0), "depth_multiplier"),
    (lambda: layers.SeparableConv2D(0, 3), "filters"),
    (lambda: layers.DepthwiseConv2D(3, padding="full"), "padding"),
])
def test_bad_arguments_are_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_kernel_larger_than_a_valid_input_is_refused(numpy_backend):
    with pytest.raises(ValueError, match=r"DepthwiseConv2D 'dw'.*kernel \(5, 5\) is larger.*\(None, 3, 3, 2\)"):
        Sequential([layers.Input((3, 3, 2)), layers.DepthwiseConv2D(5, name="dw")])


def test_plan_errors_name_the_op_and_shapes():
    with pytest.raises(ValueError, match=r"depthwise_conv2d_plan: input shape \(1, 5, 5, 3\).*\(3, 3, 4, 1\)"):
        depthwise_window("depthwise_conv2d_plan", (1, 5, 5, 3), (3, 3, 4, 1), (1, 1), "same")


@pytest.mark.parametrize("backend", ["numpy"] + FAST_BACKENDS)
def test_ops_refuse_a_plan_that_is_not_a_depthwise_one(backend):
    b = minidl.backends.set_backend(backend)
    try:
        plan = b.conv2d_plan((1, 5, 5, 2), (3, 3, 2, 3), (1, 1), "same")   # 3 outputs from 2 channels
        x, w = b.zeros((1, 5, 5, 2)), b.zeros((3, 3, 2, 1))
        with pytest.raises(ValueError, match="not a multiple of its 2 input channels"):
            b.depthwise_conv2d_forward(b.zeros((1, 5, 5, 3)), x, w, None, plan)
    finally:
        minidl.set_backend("numpy")


# ------------------------------------------------------------ training and saving
def build_model():
    inp = layers.Input((10, 11, 3))
    h = layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2, activation="relu")(inp)
    h = layers.DepthwiseConv2D(3, strides=2, padding="valid")(h)
    h = layers.SeparableConv2D(5, 3, strides=2, padding="same", activation="tanh")(h)
    h = layers.Flatten()(h)
    return Model(inp, layers.Dense(4, activation="softmax")(h))


def train(backend_name, initial, x, y):
    minidl.set_backend(backend_name)
    minidl.set_seed(7)
    model = build_model()
    model.set_weights(initial)
    model.compile(optimizer=optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=True, verbose=0)
    return model, history.history["loss"]


def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 10, 11, 3)).astype(np.float32)
    return x, (x[:, :5].mean(axis=(1, 2, 3)) > 0).astype(np.int32) + 2 * (x[..., 0].mean(axis=(1, 2)) > 0)


@pytest.mark.parametrize("backend", FAST_BACKENDS)
def test_layers_train_like_numpy(backend):
    x, y = data()
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    initial = build_model().get_weights()
    try:
        ref, ref_loss = train("numpy", initial, x, y)
        got, got_loss = train(backend, initial, x, y)
        got_weights = got.get_weights()
    finally:
        minidl.set_backend("numpy")
    assert ref_loss[-1] < ref_loss[0]
    for a, b in zip(ref.get_weights(), got_weights):
        np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(got_loss, ref_loss, rtol=1e-3)


@pytest.mark.parametrize("backend", ["numpy"] + FAST_BACKENDS)
def test_save_and_load_keep_weights_and_predictions(backend, tmp_path):
    x, y = data()
    minidl.set_backend(backend)
    minidl.set_seed(0)
    try:
        model = build_model()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.fit(x, y, epochs=1, verbose=0)
        path = str(tmp_path / "dw.keras")
        model.save(path)
        loaded = load_model(path)
        for a, b in zip(model.get_weights(), loaded.get_weights()):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    finally:
        minidl.set_backend("numpy")


@pytest.mark.parametrize("backend", ["numpy"] + FAST_BACKENDS)
def test_unknown_image_sizes_train_and_predict_at_any_size(backend):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(8, 12, 12, 3)).astype(np.float32), rng.integers(0, 3, 8)
    minidl.set_backend(backend)
    minidl.set_seed(0)
    try:
        inp = layers.Input((None, None, 3))
        h = layers.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2)(inp)
        h = layers.SeparableConv2D(3, 3, activation="relu")(h)
        model = Model(inp, layers.GlobalAveragePooling2D()(h))
        assert model.output_shape == (None, 3)
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        model.fit(x, y, batch_size=4, epochs=1, verbose=0)
        big = rng.normal(size=(2, 19, 17, 3)).astype(np.float32)
        assert model.predict(big, verbose=0).shape == (2, 3)
        np.testing.assert_allclose(model.predict(x[:3], verbose=0), model.predict(x, verbose=0)[:3],
                                   rtol=1e-5, atol=1e-6)
    finally:
        minidl.set_backend("numpy")


# ------------------------------------------------------------ cpu kernels
@pytest.mark.parametrize("in_shape,kernel_shape,strides,padding", [
    ((3, 9, 8, 5), (3, 3, 5, 1), (1, 1), "same"),
    ((2, 9, 8, 5), (3, 3, 5, 2), (2, 2), "same"),
    ((4, 30, 30, 24), (3, 3, 24, 1), (2, 2), "same"),      # large enough to run threaded
    ((4, 20, 21, 12), (3, 3, 12, 2), (1, 1), "same"),      # threaded, with a multiplier
    ((2, 12, 11, 17), (5, 3, 17, 3), (1, 2), "valid"),
])
def test_cpu_kernels_match_their_reference_twins(isa, in_shape, kernel_shape, strides, padding):
    rng = np.random.default_rng(3)
    plan = depthwise_window("test", in_shape, kernel_shape, strides, padding)
    win = window_struct("test", plan)
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal(kernel_shape, dtype=np.float32)
    bias = rng.standard_normal(plan.oc, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)

    def both(shape, fast, ref):
        got, want = np.full(shape, np.nan, np.float32), np.full(shape, np.nan, np.float32)
        assert fast(got) == 0
        ref(want)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    both(plan.out_shape, lambda o: lib.minidl_depthwise_conv2d_forward(fptr(o), fptr(x), fptr(w), fptr(bias), win),
         lambda o: lib.minidl_depthwise_conv2d_forward_ref(fptr(o), fptr(x), fptr(w), fptr(bias), win))
    both(plan.in_shape, lambda o: lib.minidl_depthwise_conv2d_backward_data(fptr(o), fptr(dout), fptr(w), win),
         lambda o: lib.minidl_depthwise_conv2d_backward_data_ref(fptr(o), fptr(dout), fptr(w), win))
    db, db_ref = np.full(plan.oc, np.nan, np.float32), np.full(plan.oc, np.nan, np.float32)
    both(kernel_shape,
         lambda o: lib.minidl_depthwise_conv2d_backward_filter(fptr(o), fptr(db), fptr(dout), fptr(x), win),
         lambda o: lib.minidl_depthwise_conv2d_backward_filter_ref(fptr(o), fptr(db_ref), fptr(dout), fptr(x), win))
    np.testing.assert_allclose(db, db_ref, rtol=1e-4, atol=1e-4)
