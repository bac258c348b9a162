"""minidl.mixed_precision: Keras's policy API, bf16 / fp16 operand rounding in Conv2D and Dense
(forward and backward) against a float64 reference on rounded operands, training on every
backend, the policy saved with the model, LossScaleOptimizer, info() and the one warning (given
only where the kernels are an emulation)."""

import warnings

import numpy as np
import pytest

import minidl
from minidl import layers, mixed_precision as mp, optimizers
from minidl.backends.numpy_ops.tensor_ops import round_to_precision
from minidl.models import Model, Sequential, load_model
from layer_runs import LayerRun


@pytest.fixture(autouse=True)
def float32_afterwards():
    yield
    mp.set_global_policy("float32")
    minidl.set_backend("numpy")




def test_policy_names_and_dtypes():
    policy = mp.Policy("mixed_bfloat16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == \
        ("mixed_bfloat16", "bfloat16", "float32")
    assert mp.DTypePolicy("mixed_float16").compute_dtype == "float16"
    assert mp.DTypePolicy().compute_dtype == "float32" and repr(policy) == '<DTypePolicy "mixed_bfloat16">'
    with pytest.raises(ValueError, match="use 'mixed_bfloat16'"):
        mp.Policy("bfloat16")
    with pytest.raises(ValueError, match="name must be one of"):
        mp.set_global_policy("int8")


def test_global_policy_is_taken_at_construction_and_dtype_overrides_it():
    assert mp.global_policy().name == "float32"
    before = layers.Dense(3)
    mp.set_global_policy("mixed_bfloat16")
    assert mp.global_policy() == mp.Policy("mixed_bfloat16")
    during = layers.Dense(3)
    own = layers.Conv2D(4, 3, dtype="float32")
    mp.set_global_policy(None)
    assert before.dtype_policy.name == "float32" and before.compute_dtype == "float32"
    assert during.compute_dtype == "bfloat16" and during.variable_dtype == "float32"
    assert own.compute_dtype == "float32" and "dtype" not in own.get_config()
    assert layers.Dense(2, dtype=mp.Policy("mixed_float16")).get_config()["dtype"] == "mixed_float16"
    keras_config = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}}
    assert layers.Dense(2, dtype=keras_config).compute_dtype == "bfloat16"
    with pytest.raises(ValueError, match="DTypePolicy: name must be one of"):
        layers.Dense(2, dtype="float64")


def _dense_model(policy, rng):
    model = Sequential([layers.Input((37,)), layers.Dense(19, dtype=policy)])
    model.compile(optimizer="sgd", loss="mse")
    return model


@pytest.mark.parametrize("policy,precision", [("mixed_bfloat16", "bfloat16"), ("mixed_float16", "float16")])
def test_dense_computes_on_rounded_operands(active_backend, policy, precision):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(23, 37)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = _dense_model(policy, rng)
        got = model.predict(x)
    kernel, bias = model.get_weights()
    rx, rk = (round_to_precision(a, precision).astype(np.float64) for a in (x, kernel))
    np.testing.assert_allclose(got, rx @ rk + bias, rtol=1e-5, atol=1e-5)
    plain = x.astype(np.float64) @ kernel + bias
    assert np.abs(got - plain).max() > 1e-4          # the rounding did happen
    assert kernel.dtype == np.float32                # master weights stay float32


def test_conv_forward_and_backward_use_rounded_operands(active_backend):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 7, 7, 3)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        conv = layers.Conv2D(5, 3, padding="same", use_bias=False, dtype="mixed_bfloat16")
        model = Sequential([layers.Input((7, 7, 3)), conv, layers.Flatten(), layers.Dense(2, dtype="float32")])
        model.compile(optimizer=optimizers.SGD(1.0), loss="mse")
        kernel = model.get_weights()[0]
        b = minidl.get_backend()
        xt = b.from_numpy(x)
        run = LayerRun(conv, input_grad_needed=True)   # the model's first layer: its dx is wanted here
        out = run.forward(xt, True)
        dout = rng.normal(size=(4, 7, 7, 5)).astype(np.float32)
        dx = run.backward(b.from_numpy(dout))
    rx = round_to_precision(x, "bfloat16").astype(np.float64)
    rk = round_to_precision(kernel, "bfloat16").astype(np.float64)
    cols = np.lib.stride_tricks.sliding_window_view(np.pad(rx, ((0, 0), (1, 1), (1, 1), (0, 0))),
                                                    (3, 3), axis=(1, 2))
    cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(-1, 27)
    np.testing.assert_allclose(b.to_numpy(out), (cols @ rk.reshape(27, 5)).reshape(4, 7, 7, 5),
                               rtol=1e-5, atol=1e-5)
    rdout = round_to_precision(dout, "bfloat16").astype(np.float64)   # dL/doutput in the compute dtype
    dweight = (cols.T @ rdout.reshape(-1, 5)).reshape(kernel.shape)
    np.testing.assert_allclose(b.to_numpy(conv.kernel.grad), dweight, rtol=1e-4, atol=1e-4)
    # dx = the transposed convolution of dout by the rounded kernel
    dcols = rdout.reshape(-1, 5) @ rk.reshape(27, 5).T   # (n*h*w, kh*kw*c)
    dpad = np.zeros((4, 9, 9, 3))
    dcols = dcols.reshape(4, 7, 7, 3, 3, 3)
    for ky in range(3):
        for kx in range(3):
            dpad[:, ky:ky + 7, kx:kx + 7] += dcols[:, :, :, ky, kx]
    np.testing.assert_allclose(b.to_numpy(dx), dpad[:, 1:8, 1:8], rtol=1e-4, atol=1e-4)


def _cnn():
    inp = layers.Input((10, 10, 3))
    h = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    h = layers.BatchNormalization()(h)
    h = layers.MaxPooling2D(2)(h)
    h = layers.Flatten()(h)
    h = layers.Dense(16, activation="relu")(h)
    return Model(inp, layers.Dense(3, activation="softmax")(h))


def test_mixed_bfloat16_model_trains(active_backend):
    rng = np.random.default_rng(2)
    x = rng.random((64, 10, 10, 3)).astype(np.float32)
    y = (x[:, :5].mean(axis=(1, 2, 3)) > x[:, 5:].mean(axis=(1, 2, 3))).astype(np.int64)
    mp.set_global_policy("mixed_bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = _cnn()
        model.compile(optimizer=mp.LossScaleOptimizer(optimizers.Adam(0.01)),
                      loss="sparse_categorical_crossentropy")
        history = model.fit(x, y, batch_size=16, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.8 * losses[0], losses
    assert all(w.dtype == np.float32 for w in model.get_weights())
    assert [l.compute_dtype for l in model.layers[1:]] == ["bfloat16"] * 6


def test_policy_is_saved_with_the_model(active_backend, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = Sequential([layers.Input((6,)), layers.Dense(4, dtype="mixed_bfloat16"),
                            layers.Dense(2)])
        model.compile(optimizer="sgd", loss="mse")
        model.save(tmp_path / "m.minidl")
        loaded = load_model(tmp_path / "m.minidl")
        x = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
        np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert [l.dtype_policy.name for l in loaded.layers] == ["mixed_bfloat16", "float32"]


def test_loss_scale_optimizer_is_keras_optimizers_one():
    inner = optimizers.SGD(0.1)
    wrapped = mp.LossScaleOptimizer(inner)
    assert isinstance(wrapped, optimizers.LossScaleOptimizer) and wrapped.inner_optimizer is inner
    with pytest.raises(TypeError, match="inner_optimizer must be a minidl Optimizer"):
        mp.LossScaleOptimizer("sgd")
    with pytest.raises(ValueError, match="initial_scale"):
        mp.LossScaleOptimizer(inner, initial_scale=0)


def test_warns_once_and_info_says_emulated():
    minidl.set_backend("numpy")
    mp._warned.clear()
    model = Sequential([layers.Input((4,)), layers.Dense(3, dtype="mixed_bfloat16")])
    x = np.ones((2, 4), np.float32)
    with pytest.warns(RuntimeWarning, match="expect it to be slower than float32"):
        model.predict(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(x)                            # once per process and policy
    info = mp.info()
    assert info["native_bf16_kernel"] is False and info["compute"].startswith("emulated")
    assert info["kernels"] == "emulated"


@pytest.mark.parametrize("amx", [True, False])
def test_cpu_info_and_warning_follow_the_kernels_that_run(amx):
    """With AMX the cpu backend's mixed_bfloat16 runs native kernels and does not warn; with it
    off (or absent, as on AVX2-only and AVX-512-without-AMX machines) it warns and says emulated."""
    from minidl.backends.cpu._ffi import lib
    if amx and not (lib.minidl_amx_available() and lib.minidl_cpu_has_avx512_bf16()):
        pytest.skip("no AMX on this machine")
    minidl.set_backend("cpu")
    was = lib.minidl_amx_active()
    lib.minidl_set_amx(1 if amx else 0)
    try:
        mp._warned.clear()
        model = Sequential([layers.Input((4,)), layers.Dense(3, dtype="mixed_bfloat16")])
        x = np.ones((2, 4), np.float32)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.predict(x)
        emulation_warnings = [w for w in caught if "an emulation" in str(w.message)]
        assert len(emulation_warnings) == (0 if amx else 1)
        info = mp.info()
        assert info["kernels"] == ("amx" if amx else "emulated") and info["native_bf16_kernel"] is amx
        assert minidl.get_backend().info()["bf16"].startswith("amx" if amx else "rounded")
    finally:
        lib.minidl_set_amx(1 if was else 0)


@pytest.mark.parametrize("amx", [True, False])
def test_mixed_bfloat16_follows_the_float32_loss_curve(amx):
    """Accuracy sanity of the cpu backend's bf16 kernels (AMX) and of their fallback: the same
    small CNN from the same initial weights, trained on the same synthetic data under float32
    and mixed_bfloat16, ends with about the same loss, well below where it started."""
    from minidl.backends.cpu._ffi import lib
    if amx and not (lib.minidl_amx_available() and lib.minidl_cpu_has_avx512_bf16()):
        pytest.skip("no AMX on this machine")
    minidl.set_backend("cpu")
    rng = np.random.default_rng(5)
    x = rng.random((96, 10, 10, 3)).astype(np.float32)
    y = (x[:, :5].mean(axis=(1, 2, 3)) > x[:, 5:].mean(axis=(1, 2, 3))).astype(np.int64) + \
        (x[..., 0].mean(axis=(1, 2)) > 0.5)
    was = lib.minidl_amx_active()
    lib.minidl_set_amx(1 if amx else 0)
    curves = {}
    try:
        for policy in ("float32", "mixed_bfloat16"):
            mp.set_global_policy(policy)
            minidl.set_seed(3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                model = _cnn()
                model.compile(optimizer=optimizers.Adam(0.005), loss="sparse_categorical_crossentropy")
                curves[policy] = model.fit(x, y, batch_size=16, epochs=8, verbose=0, shuffle=False).history["loss"]
    finally:
        lib.minidl_set_amx(1 if was else 0)
    f32, bf16 = np.array(curves["float32"]), np.array(curves["mixed_bfloat16"])
    assert abs(bf16[0] - f32[0]) < 0.05 * f32[0], (f32, bf16)     # same start: same weights
    assert bf16[-1] < 0.6 * bf16[0], bf16                          # it trains
    assert abs(bf16[-1] - f32[-1]) < 0.15 * f32[0], (f32, bf16)    # as float32 does, within noise
