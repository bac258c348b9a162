"""minidl.larq.quantizers: larq's names, defaults and serialization; the quantize ops against
larq's formulas written out in numpy; the C kernels against their plain twins on every ISA path.
(tests/test_ops.py compares every backend with the numpy one, row by row.)"""

import math

import numpy as np
import pytest

import minidl
import minidl.larq as lq
from minidl.backends.base import QUANTIZERS
from minidl.backends.numpy_backend import NumpyBackend


# ------------------------------------------------------------------ larq's formulas, in numpy
def larq_forward(name, x, param, stat=None):
    """What larq (TensorFlow) computes, written from larq/quantizers.py's formulas."""
    f = np.float32
    if name in ("ste_sign", "approx_sign", "swish_sign"):
        return np.sign(np.sign(x) + f(0.1))
    if name == "ste_heaviside":
        return np.sign(np.maximum(x, f(0)))
    if name == "ste_tern":
        t = f(param) if stat is None else f(0.7) * np.abs(x).sum(dtype=f) / f(x.size)
        return np.sign(np.sign(x + t) + np.sign(x - t))
    n = f(param)
    if name == "dorefa_activations":
        return np.round(np.clip(x, 0, 1) * n) / n
    limited = np.tanh(x)
    scaled = limited / (f(2) * np.abs(limited).max()) + f(0.5)
    return f(2) * (np.round(scaled * n) / n) - f(1)


def larq_gradient(name, x, dy, param, stat=None):
    if name in ("ste_sign", "ste_heaviside", "ste_tern"):
        return np.where(np.abs(x) <= param, dy, 0)
    if name == "approx_sign":
        return np.where(np.abs(x) <= 1, (1 - np.abs(x)) * 2 * dy, 0)
    if name == "swish_sign":
        bx = param * x
        return dy * param * (2 - bx * np.tanh(bx * 0.5)) / (1 + np.cosh(bx))
    if name == "dorefa_activations":
        return np.where((x >= 0) & (x <= 1), dy, 0)
    limited = np.tanh(x)
    return 2 * dy / (2 * np.abs(limited).max()) * (1 - limited ** 2)


PARAMS = {"ste_sign": (0.0, 1.0), "approx_sign": (0.0, 0.0), "swish_sign": (0.0, 5.0),
          "ste_heaviside": (0.0, 1.0), "ste_tern": (0.05, 1.0), "dorefa_activations": (3.0, 0.0),
          "dorefa_weights": (7.0, 0.0)}


def _inputs(rng, n=301):
    x = (rng.standard_normal(n) * 1.3).astype(np.float32)
    x[:8] = [0.0, -0.0, 1.0, -1.0, 0.05, -0.05, 0.5, 1e-30]
    return x


def _stat(name, x, twn=False):
    if name == "dorefa_weights":
        return np.array([np.abs(x).max()], np.float32)
    if name == "ste_tern" and twn:
        return np.array([np.abs(x).sum(dtype=np.float32)], np.float32)
    return None


@pytest.mark.parametrize("twn", [False, True])
@pytest.mark.parametrize("name", QUANTIZERS)
def test_numpy_ops_follow_larqs_formulas(name, twn):
    if twn and name != "ste_tern":
        pytest.skip("Ternary Weight Networks' threshold is ste_tern's")
    rng = np.random.default_rng(QUANTIZERS.index(name))
    b = NumpyBackend()
    x, dy = _inputs(rng), rng.standard_normal(301).astype(np.float32)
    forward_param, backward_param = PARAMS[name]
    stat = _stat(name, x, twn)
    q, dx = np.empty_like(x), np.empty_like(x)
    b.quantize_forward(q, x, name, forward_param, stat)
    b.quantize_backward(dx, dy, x, name, backward_param, stat)
    np.testing.assert_allclose(q, larq_forward(name, x, forward_param, stat), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dx, larq_gradient(name, x, dy, backward_param, stat), rtol=1e-5, atol=1e-6)
    if name in ("ste_sign", "approx_sign", "swish_sign"):
        assert q[0] == 1 and q[1] == 1, "larq's sign maps 0 to +1"


@pytest.mark.parametrize("name", QUANTIZERS)
def test_cpu_kernels_match_their_plain_twins(isa, name):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(7)
    x = _inputs(rng, 70001)                  # above the threading threshold
    x[100:110] = np.nan
    dy = rng.standard_normal(x.size).astype(np.float32)
    forward_param, backward_param = PARAMS[name]
    stat = _stat(name, x[~np.isnan(x)], twn=True)
    code = QUANTIZERS.index(name)
    ps = ffi.NULL if stat is None else ffi.from_buffer("float[]", stat)
    fp = lambda a: ffi.from_buffer("float[]", a)   # noqa: E731
    results = []
    for forward, backward in ((lib.minidl_quantize_forward, lib.minidl_quantize_backward),
                              (lib.minidl_quantize_forward_reference, lib.minidl_quantize_backward_reference)):
        q, dx = np.full_like(x, 7.0), np.full_like(x, 7.0)
        forward(fp(q), fp(x), ps, code, forward_param, x.size)
        backward(fp(dx), fp(dy), fp(x), ps, code, backward_param if backward_param else 0.0, x.size)
        results.append((q, dx))
    (q, dx), (q_ref, dx_ref) = results
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-6, atol=0)
    assert np.isnan(q[100:110]).all() and (dx[100:110] == 0).all()


def test_op_arguments_are_checked(backend):
    x = backend.from_numpy(np.zeros(4, np.float32))
    out = backend.empty((4,))
    with pytest.raises(ValueError, match="name must be one of"):
        backend.quantize_forward(out, x, "sign")
    with pytest.raises(ValueError, match="stat"):
        backend.quantize_forward(out, x, "dorefa_weights", 3.0)
    with pytest.raises(ValueError, match="out"):
        backend.quantize_forward(backend.empty((5,)), x, "ste_sign")


# ------------------------------------------------------------------ the objects
@pytest.mark.parametrize("alias, cls, config", [
    ("ste_sign", lq.quantizers.SteSign, {"clip_value": 1.0}),
    ("approx_sign", lq.quantizers.ApproxSign, {}),
    ("swish_sign", lq.quantizers.SwishSign, {"beta": 5.0}),
    ("ste_heaviside", lq.quantizers.SteHeaviside, {"clip_value": 1.0}),
    ("ste_tern", lq.quantizers.SteTern, {"threshold_value": 0.05, "ternary_weight_networks": False,
                                         "clip_value": 1.0}),
    ("dorefa_quantizer", lq.quantizers.DoReFa, {"k_bit": 2, "mode": "activations"}),
])
def test_aliases_and_defaults_are_larqs(alias, cls, config):
    q = lq.quantizers.get(alias)
    assert type(q) is cls
    got = q.get_config()
    assert {k: got[k] for k in config} == config
    again = lq.quantizers.deserialize(lq.quantizers.serialize(q))
    assert type(again) is cls and {k: again.get_config()[k] for k in config} == config


def test_precisions():
    assert lq.quantizers.SteSign().precision == 1
    assert lq.quantizers.SteTern().precision == 2
    assert lq.quantizers.DoReFa(k_bit=4).precision == 4
    assert lq.quantizers.NoOp(precision=1).precision == 1
    assert lq.quantizers.DoReFaQuantizer is lq.quantizers.DoReFa


def test_bad_quantizers_are_refused():
    with pytest.raises(ValueError, match="Invalid DoReFa quantizer mode"):
        lq.quantizers.DoReFa(mode="bias")
    with pytest.raises(ValueError, match="Unknown quantizer"):
        lq.quantizers.get("sign_ste")
    with pytest.raises(TypeError, match="Quantizer"):
        lq.quantizers.get(np.sign)
    with pytest.raises(ValueError, match="clip_value"):
        lq.quantizers.SteSign(clip_value=-1)
    with pytest.raises(ValueError, match="available: \\['flip_ratio'\\]"):    # flip_ratio itself exists
        lq.quantizers.SteSign(metrics=["flip_ratios"])


def test_math_sign_and_heaviside(backend):
    x = np.array([-2.0, -0.0, 0.0, 0.3, np.nan], np.float32)
    np.testing.assert_array_equal(lq.math.sign(x), [-1, 1, 1, 1, np.nan])
    np.testing.assert_array_equal(lq.math.heaviside(x), [0, 0, 0, 1, np.nan])
    got = backend.to_numpy(lq.math.sign(backend.from_numpy(x), backend=backend))
    np.testing.assert_array_equal(got, [-1, 1, 1, 1, np.nan])


def test_a_quantizer_is_a_layer_with_its_gradient(active_backend):
    """A quantizer in a model: sign forward, clipped identity backward (SGD moves only the
    Dense kernel rows whose input was within the clip)."""
    rng = np.random.default_rng(0)
    x = np.array([[-2.0, -0.5, 0.0, 0.5, 2.0]], np.float32)
    inputs = minidl.layers.Input((5,))
    outputs = lq.quantizers.SteSign()(inputs)
    model = minidl.Model(inputs, outputs)
    np.testing.assert_array_equal(model.predict(x, verbose=0), [[-1, -1, 1, 1, 1]])
    # the gradient through it: a trainable scale before it, learned through the STE
    first = minidl.layers.Dense(5, use_bias=False)
    model = minidl.Sequential([minidl.layers.Input((5,)), first, lq.quantizers.SteSign()])
    first.set_weights([np.eye(5, dtype=np.float32)])
    model.compile(minidl.optimizers.SGD(learning_rate=1.0), "mse")
    target = rng.standard_normal((1, 5)).astype(np.float32)
    model.train_on_batch(x, target)
    moved = np.abs(first.get_weights()[0] - np.eye(5)).sum(axis=1) > 0
    # row i of the kernel moves when input i is non-zero and output j is within the clip: the
    # outputs are x itself (identity kernel), so columns 1, 2, 3 pass, rows with x != 0 move
    np.testing.assert_array_equal(moved, [True, True, False, True, True])
    grads = first.get_weights()[0] - np.eye(5)
    assert np.all(grads[:, [0, 4]] == 0), "outside |x| <= 1 the STE passes nothing"
