"""int8 inference: the qgemm / qconv kernels of every backend and cpu ISA path exactly equal to
the integer numpy reference, the reference itself against float math, and quantized models
(calibration, BN folding, save / load) against their float models on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers, zoo
from minidl.backends.base import make_window
from minidl.backends.numpy_backend import NumpyBackend
from minidl.backends.numpy_ops.quantized import unpack_weights
from minidl.models import Model, Sequential
from minidl.models.minidl_files import ModelFileError
from minidl.quantization import load_quantized_model, quantize
from minidl.quantization.packing import (WEIGHT_MAX, add_multiplier, epilogue_arrays, pack,
                                         quantize_kernel, weight_scales)

REFERENCE = NumpyBackend()


def _layer_arrays(rng, k, n, in_qp, out_scale):
    kernel = rng.normal(size=(k, n)).astype(np.float32)
    scales = weight_scales(kernel)
    q = quantize_kernel(kernel, scales)
    offset, mult = epilogue_arrays(q, scales, rng.normal(size=n), in_qp[0], in_qp[1], out_scale)
    return q, pack(q), offset, mult


def _run(ops, op, out_like, *args):
    """Run `op` of `ops` on uploaded copies of the numpy args (plans and scalars as they are)."""
    up = [ops.quantized_upload(a) if isinstance(a, np.ndarray) else a for a in args]
    out = ops.quantized_upload(out_like)
    getattr(ops, op)(out, *up)
    return ops.to_numpy(out)


GEMM_CASES = [(1, 3, 5), (7, 27, 16), (33, 100, 37), (64, 288, 64)]


@pytest.mark.parametrize("m,k,n", GEMM_CASES)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("out_dtype", [np.uint8, np.float32])
def test_qgemm_equals_reference(backend, m, k, n, relu, out_dtype):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.integers(0, 256, size=(m, k), dtype=np.uint8)
    a[0, :] = 255                                   # the largest products: no saturation
    _, w, offset, mult = _layer_arrays(rng, k, n, (0.02, 17), 0.05 if out_dtype == np.uint8 else None)
    zp = 9 if out_dtype == np.uint8 else 0
    out = np.zeros((m, n), out_dtype)
    expected = out.copy()
    REFERENCE.qgemm_forward(expected, a, w, offset, mult, zp, relu)
    got = _run(backend, "qgemm_forward", out, a, w, offset, mult, zp, relu)
    np.testing.assert_array_equal(got, expected)


CONV_CASES = [((2, 9, 9, 3), (3, 3), (1, 1), "same", 16), ((3, 8, 7, 5), (3, 2), (2, 1), "valid", 7),
              ((2, 6, 6, 8), (1, 1), (1, 1), "valid", 20), ((1, 11, 11, 4), (5, 5), (2, 2), "same", 33)]


@pytest.mark.parametrize("in_shape,kernel,strides,padding,filters", CONV_CASES)
@pytest.mark.parametrize("out_dtype", [np.uint8, np.float32])
def test_qconv2d_equals_reference(backend, in_shape, kernel, strides, padding, filters, out_dtype):
    rng = np.random.default_rng(sum(in_shape) + filters)
    x = rng.integers(0, 256, size=in_shape, dtype=np.uint8)
    plan = make_window(in_shape, kernel, strides, padding, filters)
    k = kernel[0] * kernel[1] * in_shape[3]
    _, w, offset, mult = _layer_arrays(rng, k, filters, (0.03, 40),
                                       0.1 if out_dtype == np.uint8 else None)
    zp = 128 if out_dtype == np.uint8 else 0
    out = np.zeros((plan.n, plan.oh, plan.ow, filters), out_dtype)
    expected = out.copy()
    REFERENCE.qconv2d_forward(expected, x, w, offset, mult, zp, True, 40, plan)
    got = _run(backend, "qconv2d_forward", out, x, w, offset, mult, zp, True, 40, plan)
    np.testing.assert_array_equal(got, expected)


def test_quantize_dequantize_and_pool_equal_reference(backend):
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(2, 7, 6, 5)) * 3).astype(np.float32)
    x.flat[:3] = [np.nan, np.inf, -np.inf]
    ops = backend
    q_ref = np.zeros(x.shape, np.uint8)
    REFERENCE.quantize_u8(q_ref, x, 0.037, 100)
    np.testing.assert_array_equal(_run(ops, "quantize_u8", q_ref * 0, x, 0.037, 100), q_ref)
    assert q_ref.flat[0] == 100 and q_ref.flat[1] == 255 and q_ref.flat[2] == 0
    f_ref = np.zeros(x.shape, np.float32)
    REFERENCE.dequantize_u8(f_ref, q_ref, 0.037, 100)
    np.testing.assert_array_equal(_run(ops, "dequantize_u8", f_ref * 0, q_ref, 0.037, 100), f_ref)
    plan = make_window(x.shape, (3, 3), (2, 2), "same", None)
    p_ref = np.zeros((plan.n, plan.oh, plan.ow, plan.c), np.uint8)
    REFERENCE.max_pool2d_u8(p_ref, q_ref, plan)
    np.testing.assert_array_equal(_run(ops, "max_pool2d_u8", p_ref * 0, q_ref, plan), p_ref)


@pytest.mark.parametrize("relu", [False, True])
def test_add_u8_equals_reference(backend, relu):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, size=(3, 70001), dtype=np.uint8)
    b = rng.integers(0, 256, size=(3, 70001), dtype=np.uint8)
    args = (a, b, 31, 200, add_multiplier(0.05, 0.07), add_multiplier(0.2, 0.07), 60, relu)
    expected = np.zeros(a.shape, np.uint8)
    REFERENCE.add_u8(expected, *args)
    np.testing.assert_array_equal(_run(backend, "add_u8", expected * 0, *args), expected)
    real = 0.05 * (a.astype(np.float64) - 31) + 0.2 * (b.astype(np.float64) - 200)
    want = np.clip(np.rint(real / 0.07) + 60, 60 if relu else 0, 255)
    assert np.abs(expected - want).max() <= 1           # the fixed point rounds within a step


def test_reference_matches_float_convolution():
    """The integer reference computes the convolution of the dequantized tensors: within the
    output's quantization step of float64 math on them."""
    rng = np.random.default_rng(5)
    in_shape, filters = (2, 8, 8, 3), 6
    x = rng.integers(0, 256, size=in_shape, dtype=np.uint8)
    plan = make_window(in_shape, (3, 3), (1, 1), "same", filters)
    q, w, offset, mult = _layer_arrays(rng, 27, filters, (0.02, 30), None)
    out = np.zeros((2, 8, 8, filters), np.float32)
    REFERENCE.qconv2d_forward(out, x, w, offset, mult, 0, False, 30, plan)
    real_x = 0.02 * (x.astype(np.float64) - 30)
    padded = np.pad(real_x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(-1, 27)
    w_real = q * (mult / np.float32(0.02)).astype(np.float64)     # q * weight scale
    bias_real = (offset + 30 * q.astype(np.int64).sum(0)) * mult.astype(np.float64)
    expected = (cols @ w_real + bias_real).reshape(out.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    assert np.array_equal(unpack_weights(w, 27, filters), q)
    assert np.abs(q).max() <= WEIGHT_MAX


def test_vnni_path():
    """avx512 with AMX switched off runs the vpdpbusd micro-kernel, and it equals the reference
    (tests/test_qgemm_paths.py runs every case on every int8 path)."""
    from minidl._cpu_kernels import lib
    if not lib.minidl_cpu_has_avx512_vnni():
        pytest.skip("this CPU has no AVX512_VNNI: the vpdpbusd micro-kernel is compiled but cannot run here")
    from conftest import isa_selected
    from minidl.backends.cpu import create
    ops = create()
    try:
        with isa_selected("avx512"):
            lib.minidl_set_amx(0)
            assert ops.quantized_path() == "vnni"
            rng = np.random.default_rng(5)
            a = rng.integers(0, 256, size=(33, 100), dtype=np.uint8)
            _, w, offset, mult = _layer_arrays(rng, 100, 37, (0.02, 17), 0.05)
            out = np.zeros((33, 37), np.uint8)
            expected = out.copy()
            REFERENCE.qgemm_forward(expected, a, w, offset, mult, 9, True)
            np.testing.assert_array_equal(_run(ops, "qgemm_forward", out, a, w, offset, mult, 9, True),
                                          expected)
    finally:
        lib.minidl_set_amx(1 if minidl.settings.current().amx else 0)


# ------------------------------------------------------------------ models


def _small_cnn():
    return Sequential([
        layers.Input((12, 12, 3)),
        layers.Conv2D(8, 3, padding="same", activation="relu"),
        layers.Conv2D(8, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(16, activation="relu"),
        layers.Dense(5, activation="softmax"),
    ])


def _small_resnet():
    inp = layers.Input((10, 10, 3))
    h = layers.Conv2D(8, 3, padding="same", use_bias=False)(inp)
    h = layers.BatchNormalization()(h)
    h = layers.Activation("relu")(h)
    r = layers.Conv2D(8, 3, padding="same")(h)
    r = layers.BatchNormalization()(r)
    h = layers.Activation("relu")(layers.Add()([h, r]))
    h = layers.GlobalAveragePooling2D()(h)
    return Model(inp, layers.Dense(4, activation="softmax")(h))


def _trained(make, x, y):
    model = make()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    return model


def _data(shape, n=96, classes=5):
    rng = np.random.default_rng(0)
    x = rng.random((n,) + shape).astype(np.float32)
    # labels a function of the input, so that training learns something to agree on
    y = (x[:, : shape[0] // 2].mean(axis=(1, 2, 3)) * 40).astype(np.int64) % classes
    return x, y


@pytest.mark.parametrize("method", ["minmax", "percentile"])
def test_quantized_cnn_agrees_with_float(active_backend, method):
    x, y = _data((12, 12, 3))
    model = _trained(_small_cnn, x, y)
    qmodel = quantize(model, x[:48], method=method, percentile=99.9)
    assert qmodel.info()["int8_layers"] == [l.name for l in model.layers
                                            if isinstance(l, (layers.Conv2D, layers.Dense))]
    pf, pq = model.predict(x), qmodel.predict(x, batch_size=40)
    assert pq.shape == pf.shape
    assert (pf.argmax(1) == pq.argmax(1)).mean() >= 0.9
    assert np.abs(pf - pq).max() < 0.1


def test_resnet_block_folds_batchnorm(active_backend):
    x, y = _data((10, 10, 3), classes=4)
    model = _trained(_small_resnet, x, y)
    qmodel = quantize(model, x)
    kinds = [s["kind"] for s in qmodel.steps]
    assert kinds.count("alias") == 4            # two BatchNormalization, two ReLU fused
    assert kinds.count("add") == 1 and qmodel.steps[kinds.index("add")]["relu"]
    pf, pq = model.predict(x), qmodel.predict(x)
    assert (pf.argmax(1) == pq.argmax(1)).mean() >= 0.9
    assert np.abs(pf - pq).max() < 0.1


def test_quantized_backends_agree_exactly():
    """The same quantized model gives the same predictions on numpy, cpu and opencl, up to the
    float layers (here only the final softmax) that run in each backend's float math."""
    x, y = _data((12, 12, 3))
    minidl.set_backend("numpy")
    minidl.set_seed(2)
    model = _trained(_small_cnn, x, y)
    q_numpy = quantize(model, x[:32])
    expected = q_numpy.predict(x)
    for name in ("cpu", "opencl"):
        try:
            minidl.set_backend(name)
        except minidl.backends.BackendUnavailable:
            continue
        other = Sequential.from_config(model.get_config())
        other.set_weights(model.get_weights())
        got = quantize(other, x[:32]).predict(x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    minidl.set_backend("numpy")


def test_save_load_round_trip(active_backend, tmp_path):
    x, y = _data((12, 12, 3))
    model = _trained(_small_cnn, x, y)
    qmodel = quantize(model, x[:32])
    path = tmp_path / "q.minidl"
    qmodel.save(path)
    loaded = load_quantized_model(path)
    np.testing.assert_array_equal(loaded.predict(x), qmodel.predict(x))
    assert loaded.steps == qmodel.steps


def test_load_refuses_a_tampered_file(tmp_path):
    import zipfile
    minidl.set_backend("numpy")
    x, y = _data((12, 12, 3))
    qmodel = quantize(_trained(_small_cnn, x, y), x[:32])
    path = tmp_path / "q.minidl"
    qmodel.save(path)
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    import io
    arrays = dict(np.load(io.BytesIO(members["quantized.npz"])))
    arrays["0/w"] = np.zeros(10 ** 6, np.int8)              # a weight array far too large
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    members["quantized.npz"] = buf.getvalue()
    bad = tmp_path / "bad.minidl"
    with zipfile.ZipFile(bad, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(ModelFileError, match="quantized.npz"):
        load_quantized_model(bad)
    with pytest.raises(FileNotFoundError, match="no quantized model file"):
        load_quantized_model(tmp_path / "missing.minidl")


def test_dilated_and_grouped_convolutions_stay_float():
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((9, 9, 4)), layers.Conv2D(4, 3, dilation_rate=2, activation="relu"),
                        layers.Conv2D(4, 3, groups=2), layers.Flatten(), layers.Dense(3)])
    x = np.random.default_rng(0).random((8, 9, 9, 4)).astype(np.float32)
    qmodel = quantize(model, x)
    assert [s["kind"] for s in qmodel.steps] == ["float", "float", "reshape", "dense"]
    np.testing.assert_allclose(qmodel.predict(x), model.predict(x), rtol=0.05, atol=0.05)


def test_bad_arguments_name_themselves():
    minidl.set_backend("numpy")
    model = _small_cnn()
    x = np.zeros((4, 12, 12, 3), np.float32)
    with pytest.raises(ValueError, match="method"):
        quantize(model, x, method="kl")
    with pytest.raises(ValueError, match="percentile"):
        quantize(model, x, method="percentile", percentile=30)
    with pytest.raises(ValueError, match=r"calibration batch 0 has shape \(4, 10, 10, 3\)"):
        quantize(model, np.zeros((4, 10, 10, 3), np.float32))
    with pytest.raises(ValueError, match="predict expects inputs of shape"):
        quantize(model, x).predict(np.zeros((2, 5), np.float32))


def test_keras_cnn_zoo_model_quantizes():
    minidl.set_backend("cpu")
    try:
        model = zoo.keras_cnn()
        x = np.random.default_rng(0).random((16, 32, 32, 3)).astype(np.float32)
        qmodel = quantize(model, x)
        assert qmodel.info()["kernel"] in ("amx", "avx2", "vnni", "generic")
        pf, pq = model.predict(x), qmodel.predict(x)
        assert (pf.argmax(1) == pq.argmax(1)).mean() >= 0.9
    finally:
        minidl.set_backend("numpy")
