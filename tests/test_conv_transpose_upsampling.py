"""Conv2DTranspose, UpSampling2D and Conv2D's dilation_rate / groups as Keras 3 has them: the
shapes, weight layouts, values and errors Keras 3.15.1 printed (torch backend, in the comments),
training and save/load on every backend, the cpu kernels against their reference twins, and
ops.conv / ops.conv_transpose. Gradients: tests/test_gradients.py and tests/test_autodiff.py;
op rows: tests/test_ops.py."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops
from minidl.backends.cpu._ffi import CpuPlanScratch, fptr, lib
from minidl.backends.cpu.backend import CpuBackend
from minidl.models import Sequential, load_model

# x = np.arange(1, 7).reshape(1, 2, 3, 1); kernels np.arange(1, size + 1) in Keras's layout
X_SMALL = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3, 1)

# Keras: Conv2DTranspose(1, use_bias=False, **cfg), kernel set to arange, printed y[0, :, :, 0]
KERAS_TRANSPOSE_VALUES = [
    (dict(kernel_size=3, strides=2, padding="same"),
     [[1, 2, 5, 4, 9, 6], [4, 5, 14, 10, 24, 15], [11, 16, 40, 26, 60, 36], [16, 20, 44, 25, 54, 30]]),
    (dict(kernel_size=4, strides=2, padding="same"),
     [[6, 17, 20, 29, 34, 21], [18, 46, 58, 70, 86, 51], [38, 94, 106, 134, 150, 87], [40, 89, 98, 109, 120, 66]]),
    (dict(kernel_size=3, strides=2, padding="valid", output_padding=1),
     [[1, 2, 5, 4, 9, 6, 9, 0], [4, 5, 14, 10, 24, 15, 18, 0], [11, 16, 40, 26, 60, 36, 45, 0],
      [16, 20, 44, 25, 54, 30, 36, 0], [28, 32, 71, 40, 87, 48, 54, 0], [0, 0, 0, 0, 0, 0, 0, 0]]),
    (dict(kernel_size=2, strides=1, padding="same", dilation_rate=2), [[5, 14, 10], [6, 13, 8]]),
]

# Keras: UpSampling2D(size, interpolation="bilinear")(X_SMALL)[0, :, :, 0] * 144
KERAS_BILINEAR_VALUES = [
    ((2, 2), [[144, 180, 252, 324, 396, 432], [252, 288, 360, 432, 504, 540],
              [468, 504, 576, 648, 720, 756], [576, 612, 684, 756, 828, 864]]),
    ((3, 2), [[144, 180, 252, 324, 396, 432], [144, 180, 252, 324, 396, 432],
              [288, 324, 396, 468, 540, 576], [432, 468, 540, 612, 684, 720],
              [576, 612, 684, 756, 828, 864], [576, 612, 684, 756, 828, 864]]),
]

# Keras: Conv2DTranspose(**cfg) on inputs (None, 5, 6, 4): kernel shape and output shape printed
KERAS_TRANSPOSE_SHAPES = [
    (dict(filters=5, kernel_size=3, strides=2, padding="same"), (3, 3, 5, 4), (10, 12, 5)),
    (dict(filters=5, kernel_size=3, strides=2, padding="valid"), (3, 3, 5, 4), (11, 13, 5)),
    (dict(filters=4, kernel_size=4, strides=2, padding="same"), (4, 4, 4, 4), (10, 12, 4)),
    (dict(filters=3, kernel_size=3, strides=1, padding="same"), (3, 3, 3, 4), (5, 6, 3)),
    (dict(filters=3, kernel_size=1, strides=2, padding="valid"), (1, 1, 3, 4), (10, 12, 3)),
    (dict(filters=3, kernel_size=3, strides=2, padding="valid", output_padding=1), (3, 3, 3, 4), (12, 14, 3)),
    (dict(filters=3, kernel_size=(3, 2), strides=(3, 2), padding="valid", output_padding=(2, 1)),
     (3, 2, 3, 4), (17, 13, 3)),
    (dict(filters=3, kernel_size=4, strides=2, padding="same", output_padding=0), (4, 4, 3, 4), (8, 10, 3)),
    (dict(filters=3, kernel_size=3, strides=2, padding="same", output_padding=1), (3, 3, 3, 4), (10, 12, 3)),
    (dict(filters=3, kernel_size=3, strides=1, padding="same", dilation_rate=2), (3, 3, 3, 4), (5, 6, 3)),
    (dict(filters=3, kernel_size=3, strides=1, padding="valid", dilation_rate=(2, 1)), (3, 3, 3, 4), (9, 8, 3)),
    (dict(filters=2, kernel_size=5, strides=2, padding="same"), (5, 5, 2, 4), (10, 12, 2)),
]

# Keras: Conv2D(**cfg) on inputs (2, 9, 10, 4): kernel shape and output shape printed
KERAS_CONV_SHAPES = [
    (dict(filters=6, kernel_size=3, dilation_rate=2), (3, 3, 4, 6), (5, 6, 6)),
    (dict(filters=6, kernel_size=3, groups=2, padding="same"), (3, 3, 2, 6), (9, 10, 6)),
    (dict(filters=8, kernel_size=(3, 2), groups=4, dilation_rate=(2, 1)), (3, 2, 1, 8), (5, 9, 8)),
]


def model_of(layer, input_shape):
    return Sequential([layers.Input(input_shape), layer])


@pytest.mark.parametrize("cfg,want", KERAS_TRANSPOSE_VALUES)
def test_conv2d_transpose_values_match_keras(active_backend, cfg, want):
    model = model_of(layers.Conv2DTranspose(1, use_bias=False, **cfg), (2, 3, 1))
    kernel = model.layers[-1].get_weights()[0]
    model.layers[-1].set_weights([np.arange(1, kernel.size + 1, dtype=np.float32).reshape(kernel.shape)])
    np.testing.assert_allclose(model.predict(X_SMALL, verbose=0)[0, :, :, 0], want, rtol=1e-6)


@pytest.mark.parametrize("size,want", KERAS_BILINEAR_VALUES)
def test_upsampling_bilinear_values_match_keras(active_backend, size, want):
    model = model_of(layers.UpSampling2D(size, interpolation="bilinear"), (2, 3, 1))
    np.testing.assert_allclose(model.predict(X_SMALL, verbose=0)[0, :, :, 0] * 144, want, rtol=1e-6)


def test_upsampling_nearest_repeats_pixels(active_backend):
    model = model_of(layers.UpSampling2D((2, 3)), (2, 3, 1))
    want = np.repeat(np.repeat(X_SMALL, 2, axis=1), 3, axis=2)
    np.testing.assert_array_equal(model.predict(X_SMALL, verbose=0), want)


@pytest.mark.parametrize("cfg,kernel,out", KERAS_TRANSPOSE_SHAPES)
def test_conv2d_transpose_shapes_and_kernel_layout_match_keras(cfg, kernel, out):
    model = model_of(layers.Conv2DTranspose(**cfg), (5, 6, 4))
    layer = model.layers[-1]
    assert layer.kernel.shape == kernel and layer.bias.shape == (cfg["filters"],)
    assert layer.output_shape == out
    assert model.predict(np.zeros((2, 5, 6, 4), np.float32), verbose=0).shape == (2,) + out


@pytest.mark.parametrize("cfg,kernel,out", KERAS_CONV_SHAPES)
def test_conv2d_dilation_and_groups_shapes_match_keras(cfg, kernel, out):
    model = model_of(layers.Conv2D(**cfg), (9, 10, 4))
    assert model.layers[-1].kernel.shape == kernel and model.layers[-1].output_shape == out
    assert model.predict(np.zeros((2, 9, 10, 4), np.float32), verbose=0).shape == (2,) + out


def test_names_and_configs_are_keras():
    minidl.backend.clear_session()
    transpose = layers.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=1)
    up = layers.UpSampling2D(interpolation="bilinear")
    assert transpose.name == "conv2d_transpose" and up.name == "up_sampling2d"   # Keras's names
    config = transpose.get_config()
    # Keras 3.15's configs hold tuples (checked with the torch backend)
    assert (config["output_padding"], config["dilation_rate"], config["strides"]) == ((1, 1), (1, 1), (2, 2))
    assert up.get_config()["size"] == [2, 2] and up.get_config()["interpolation"] == "bilinear"
    conv = layers.Conv2D(6, 3, dilation_rate=2, groups=3)
    assert (conv.get_config()["dilation_rate"], conv.get_config()["groups"]) == ((2, 2), 3)
    assert layers.Conv2D.from_config(conv.get_config()).groups == 3
    assert layers.Conv2DTranspose.from_config(config).output_padding == (1, 1)


def test_bad_arguments_are_refused_as_keras_does():
    # Keras: "The number of filters must be evenly divisible by the number of groups."
    with pytest.raises(ValueError, match="groups"):
        layers.Conv2D(6, 3, groups=4)
    # Keras: "`strides > 1` not supported in conjunction with `dilation_rate > 1`."
    with pytest.raises(ValueError, match="dilation_rate"):
        layers.Conv2D(6, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="dilation_rate"):
        layers.Conv2DTranspose(6, 3, strides=2, dilation_rate=2)
    # Keras: "The number of input channels must be evenly divisible by the number of groups."
    with pytest.raises(ValueError, match=r"conv2d.*4 channels.*groups=3"):
        model_of(layers.Conv2D(6, 3, groups=3), (5, 5, 4))
    # Keras: "`output_padding` must be strictly less than `strides` for all dimensions."
    with pytest.raises(ValueError, match="output_padding must be strictly less than strides"):
        layers.Conv2DTranspose(6, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="interpolation"):
        layers.UpSampling2D(interpolation="bicubic")
    with pytest.raises(ValueError, match="size"):
        layers.UpSampling2D(size=0)
    with pytest.raises(ValueError, match="kernel.*larger than its input"):
        model_of(layers.Conv2D(2, 3, dilation_rate=3), (6, 6, 1))


def decoder(seed=0):
    minidl.set_seed(seed)
    model = Sequential([
        layers.Input((8, 8, 4)),
        layers.Conv2D(8, 3, padding="same", groups=2, activation="relu"),
        layers.Conv2D(8, 3, padding="same", dilation_rate=2, groups=4, activation="relu"),
        layers.Conv2DTranspose(6, 3, strides=2, padding="same", activation="relu"),
        layers.Conv2DTranspose(4, 2, strides=2, padding="valid", output_padding=1),
        layers.Conv2D(3, 3, padding="same", dilation_rate=2),
        layers.UpSampling2D((2, 1), interpolation="bilinear"),
        layers.UpSampling2D((1, 2)),
    ])
    model.compile(optimizer=minidl.optimizers.Adam(0.01), loss="mse")
    return model


def training_data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 8, 8, 4)).astype(np.float32)
    return x, rng.normal(size=(32, 66, 66, 3)).astype(np.float32) * 0.1 + x.mean()


def test_a_decoder_trains_on_every_backend(active_backend):
    x, y = training_data()
    model = decoder()
    assert model.output_shape == (None, 66, 66, 3)
    before = model.evaluate(x, y, verbose=0)
    history = model.fit(x, y, batch_size=8, epochs=4, verbose=0)
    assert history.history["loss"][-1] < before


def test_a_decoder_trains_like_numpy(active_backend):
    x, y = training_data()
    model = decoder()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    got = model.predict(x[:4], verbose=0)
    minidl.set_backend("numpy")
    reference = decoder()
    reference.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(got, reference.predict(x[:4], verbose=0), rtol=2e-3, atol=2e-4)


def test_save_and_load_keep_the_new_layers(active_backend, tmp_path):
    x, y = training_data()
    model = decoder()
    model.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)
    path = tmp_path / "decoder.minidl"
    model.save(path)
    loaded = load_model(path)
    assert [type(layer).__name__ for layer in loaded.layers] == [type(layer).__name__ for layer in model.layers]
    assert loaded.layers[1].dilation_rate == (2, 2) and loaded.layers[1].groups == 4
    assert loaded.layers[3].output_padding == (1, 1) and loaded.layers[5].interpolation == "bilinear"
    np.testing.assert_allclose(loaded.predict(x[:4], verbose=0), model.predict(x[:4], verbose=0), rtol=1e-5,
                               atol=1e-6)


def test_unknown_image_sizes_give_what_fixed_sizes_give(active_backend):
    def stack(shape):
        minidl.set_seed(5)
        return Sequential([layers.Input(shape), layers.Conv2D(4, 3, padding="same", groups=2, dilation_rate=2),
                           layers.Conv2DTranspose(3, 3, strides=2, padding="same"),
                           layers.UpSampling2D((1, 2), interpolation="bilinear")])
    model = stack((None, None, 2))
    assert model.output_shape == (None, None, None, 3)
    rng = np.random.default_rng(8)
    for h, w in ((6, 5), (4, 7)):
        x = rng.normal(size=(2, h, w, 2)).astype(np.float32)
        fixed = stack((h, w, 2))
        fixed.set_weights(model.get_weights())
        np.testing.assert_allclose(model.predict(x, verbose=0), fixed.predict(x, verbose=0), rtol=1e-5,
                                   atol=1e-6)
        assert model.predict(x, verbose=0).shape == (2, 2 * h, 4 * w, 3)
    model.compile(optimizer="sgd", loss="mse")   # and the backward passes take the batch's size
    for h, w in ((6, 5), (4, 7)):
        x = rng.normal(size=(4, h, w, 2)).astype(np.float32)
        fixed = stack((h, w, 2))
        fixed.set_weights(model.get_weights())
        fixed.compile(optimizer="sgd", loss="mse")
        y = rng.normal(size=(4, 2 * h, 4 * w, 3)).astype(np.float32)
        model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        fixed.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        for got, want in zip(model.get_weights(), fixed.get_weights()):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------ cpu kernels vs reference twins
@pytest.mark.parametrize("in_shape,kernel_shape,strides,padding,dilation,groups", [
    ((3, 9, 8, 8), (3, 3, 4, 6), (1, 1), "same", (2, 2), 2),
    ((2, 10, 9, 8), (3, 2, 2, 8), (2, 1), "valid", (1, 1), 4),
    ((1, 11, 12, 5), (3, 3, 5, 7), (1, 1), "valid", (3, 2), 1),
])
def test_dilated_grouped_conv_matches_reference_twins(isa, in_shape, kernel_shape, strides, padding, dilation,
                                                      groups):
    ops_ = CpuBackend()
    plan = ops_.conv2d_plan(in_shape, kernel_shape, strides, padding, dilation, groups)
    s = plan.scratch_for(CpuPlanScratch).conv
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal(in_shape, dtype=np.float32), rng.standard_normal(kernel_shape, dtype=np.float32)
    bias = rng.standard_normal(kernel_shape[3], dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    runs = []
    for fast in (True, False):
        out, dx = np.empty(plan.out_shape, np.float32), np.empty(plan.in_shape, np.float32)
        dw, db = np.empty(kernel_shape, np.float32), np.empty(kernel_shape[3], np.float32)
        if fast:
            assert lib.minidl_conv2d_forward(fptr(out), fptr(x), fptr(w), fptr(bias), s.window, s.ptr, s.floats) == 0
            assert lib.minidl_conv2d_backward_data(fptr(dx), fptr(dout), fptr(w), s.window, s.ptr, s.floats) == 0
            assert lib.minidl_conv2d_backward_filter(fptr(dw), fptr(db), fptr(dout), fptr(x), s.window, s.ptr,
                                                     s.floats) == 0
        else:
            lib.minidl_conv2d_forward_ref(fptr(out), fptr(x), fptr(w), fptr(bias), s.window)
            lib.minidl_conv2d_backward_data_ref(fptr(dx), fptr(dout), fptr(w), s.window)
            lib.minidl_conv2d_backward_filter_ref(fptr(dw), fptr(db), fptr(dout), fptr(x), s.window)
        runs.append((out, dx, dw, db))
    for got, want in zip(*runs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape,sh,sw,bilinear", [((2, 5, 4, 3), 2, 2, 1), ((3, 7, 6, 9), 3, 2, 1),
                                                  ((2, 5, 4, 3), 2, 3, 0), ((4, 20, 20, 48), 2, 2, 1)])
def test_upsample_matches_reference_twins(shape, sh, sw, bilinear):
    rng = np.random.default_rng(5)
    n, h, w, c = shape
    x = rng.standard_normal(shape, dtype=np.float32)
    dout = rng.standard_normal((n, h * sh, w * sw, c), dtype=np.float32)
    got = [np.empty(dout.shape, np.float32), np.empty(shape, np.float32)]
    want = [np.empty(dout.shape, np.float32), np.empty(shape, np.float32)]
    lib.minidl_upsample2d_forward(fptr(got[0]), fptr(x), sh, sw, bilinear, *shape)
    lib.minidl_upsample2d_backward(fptr(got[1]), fptr(dout), sh, sw, bilinear, *shape)
    lib.minidl_upsample2d_forward_ref(fptr(want[0]), fptr(x), sh, sw, bilinear, *shape)
    lib.minidl_upsample2d_backward_ref(fptr(want[1]), fptr(dout), sh, sw, bilinear, *shape)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)


def test_upsample_ops_check_their_arguments(backend):
    x = backend.from_numpy(np.zeros((1, 2, 3, 1), np.float32))
    with pytest.raises(ValueError, match=r"upsample2d_forward: images \(1, 2, 3, 1\) upsampled by \(2, 2\)"):
        backend.upsample2d_forward(backend.empty((1, 4, 5, 1)), x, (2, 2), "nearest")
    with pytest.raises(ValueError, match="interpolation"):
        backend.upsample2d_forward(backend.empty((1, 4, 6, 1)), x, (2, 2), "area")


# ------------------------------------------------------------------ ops.conv, ops.conv_transpose
def test_ops_conv_transpose_is_the_layer_and_ops_conv_takes_dilation_and_groups(active_backend):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 4, 5, 3)).astype(np.float32)
    layer_model = model_of(layers.Conv2DTranspose(5, 3, strides=2, padding="same", use_bias=False), (4, 5, 3))
    kernel = layer_model.layers[-1].get_weights()[0]
    got = ops.convert_to_numpy(ops.conv_transpose(x, kernel, strides=2, padding="same"))
    np.testing.assert_allclose(got, layer_model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    y = rng.normal(size=(2, 7, 7, 4)).astype(np.float32)
    conv_model = model_of(layers.Conv2D(6, 3, dilation_rate=2, groups=2, use_bias=False), (7, 7, 4))
    kernel = conv_model.layers[-1].get_weights()[0]          # (3, 3, 2, 6): groups from the kernel, as Keras
    got = ops.convert_to_numpy(ops.conv(y, kernel, dilation_rate=2))
    np.testing.assert_allclose(got, conv_model.predict(y, verbose=0), rtol=1e-5, atol=1e-6)

