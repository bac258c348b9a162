"""Every non-GEMM op of the cpu backend against the numpy reference backend, on every ISA path.

Tests that take the `isa` fixture run once per instruction set this CPU has (generic, avx2,
avx512), switched with minidl_set_isa; one test checks that MINIDL_CPU_ISA selects the path at
load time in a fresh process. Shapes are odd on purpose: vector tails, batch 1, one channel,
and tensors large enough to be split across threads.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minidl._cpu_kernels import lib  # the extension must be built: tests fail, not skip
from minidl.backends.base import make_window
from minidl.backends.cpu import create
from minidl.backends.numpy_backend import NumpyBackend

ISA_NAMES = {0: "generic", 1: "avx2", 2: "avx512"}
ISAS = [isa for isa in ISA_NAMES if isa <= lib.minidl_cpu_best_isa()]

cpu = create()
ref = NumpyBackend()


@pytest.fixture(params=ISAS, ids=[ISA_NAMES[i] for i in ISAS])
def isa(request):
    before = lib.minidl_cpu_isa()
    assert lib.minidl_set_isa(request.param) == request.param
    yield request.param
    lib.minidl_set_isa(before)


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


SIZES = [1, 7, 16, 33, 1000, 70001]          # 70001 crosses the threading threshold
ROW_SHAPES = [(1, 1), (1, 17), (5, 3, 7), (64, 10), (33, 129), (700, 101)]


# ------------------------------------------------------------------ elementwise

@pytest.mark.parametrize("n", SIZES)
def test_add_axpby_multiply(isa, n):
    rng = np.random.default_rng(n)
    a, b = randn(rng, n), randn(rng, n)
    for op, args in (("add", ()), ("multiply", ())):
        out, expected = np.empty_like(a), np.empty_like(a)
        getattr(cpu, op)(out, a, b, *args)
        getattr(ref, op)(expected, a, b, *args)
        close(out, expected)
    out, expected = np.empty_like(a), np.empty_like(a)
    cpu.axpby(out, 0.3, a, -1.7, b)
    ref.axpby(expected, 0.3, a, -1.7, b)
    close(out, expected)
    # out may alias an input
    alias = a.copy()
    cpu.add(alias, alias, b)
    close(alias, a + b)
    alias = b.copy()
    cpu.axpby(alias, 2.0, a, 0.5, alias)
    close(alias, 2.0 * a + 0.5 * b)


@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_bias_add_and_grad(isa, shape):
    rng = np.random.default_rng(sum(shape))
    x, bias = randn(rng, shape), randn(rng, shape[-1:])
    out = np.empty_like(x)
    cpu.bias_add(out, x, bias)
    close(out, x + bias)
    cpu.bias_add(x, x, bias)                               # in place
    close(x, out)
    dbias, expected = np.empty_like(bias), np.empty_like(bias)
    cpu.bias_grad(dbias, out)
    ref.bias_grad(expected, out)
    close(dbias, expected, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ activations

ACTIVATIONS = ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax"]


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("shape", ROW_SHAPES)
def test_activation_forward_backward(isa, name, shape):
    rng = np.random.default_rng(len(name) * 100 + sum(shape))
    x = randn(rng, shape, scale=4.0)
    x.flat[:3] = [0.0, -1e-4, 3e-5][:x.size]               # near 0, where tanh cancels
    if x.size > 5:
        x.flat[3:6] = [-95.0, 95.0, 20.0]                  # saturation, exp clamping
    out, expected = np.empty_like(x), np.empty_like(x)
    cpu.activation_forward(out, x, name, alpha=0.2)
    ref.activation_forward(expected, x, name, alpha=0.2)
    close(out, expected, rtol=2e-6, atol=1e-7)
    dout = randn(rng, shape)
    dx, dx_ref = np.empty_like(x), np.empty_like(x)
    cpu.activation_backward(dx, dout, expected, name, alpha=0.2)
    ref.activation_backward(dx_ref, dout, expected, name, alpha=0.2)
    close(dx, dx_ref, rtol=1e-5, atol=1e-6)
    cpu.activation_backward(dout, dout, expected, name, alpha=0.2)  # dx may alias dout
    close(dout, dx_ref, rtol=1e-5, atol=1e-6)


def test_nan_propagates_through_relu_and_clipping(isa):
    x = np.array([np.nan, -1.0, 2.0] * 11, np.float32)     # NaN in full vectors and in the tail
    out = np.empty_like(x)
    cpu.activation_forward(out, x, "relu")
    np.testing.assert_array_equal(np.isnan(out), np.isnan(x))
    g = x * 5
    cpu.clip_by_value(g, 1.0)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(x))
    assert np.nanmax(np.abs(g)) == 1.0


def test_activation_rejects_unknown_name():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="activation_forward: unknown activation 'swish'"):
        cpu.activation_forward(x, x, "swish")


def test_tanh_and_sigmoid_relative_accuracy_over_a_wide_range(isa):
    x = np.concatenate([np.linspace(-12, 12, 20001), np.geomspace(1e-8, 1, 2001)]).astype(np.float32)
    out = np.empty_like(x)
    cpu.activation_forward(out, x, "tanh")
    close(out, np.tanh(x.astype(np.float64)), rtol=4e-7, atol=1e-30)
    cpu.activation_forward(out, x, "sigmoid")
    close(out, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=4e-7, atol=1e-30)


# ------------------------------------------------------------------ pooling

POOL_CASES = [  # (input shape, pool size, strides, padding)
    ((1, 5, 5, 1), (2, 2), (2, 2), "valid"),
    ((2, 7, 9, 3), (3, 3), (2, 2), "same"),
    ((1, 8, 8, 17), (2, 2), (1, 1), "same"),
    ((3, 6, 11, 5), (3, 2), (1, 3), "valid"),
    ((2, 9, 7, 16), (5, 5), (2, 1), "same"),
    ((1, 4, 4, 2), (4, 4), (4, 4), "same"),
    ((4, 32, 32, 8), (3, 3), (2, 2), "same"),
]


@pytest.mark.parametrize("shape,pool,strides,padding", POOL_CASES)
def test_max_pool(isa, shape, pool, strides, padding):
    rng = np.random.default_rng(sum(shape))
    x = randn(rng, shape)
    x[..., 0] = np.round(x[..., 0])                        # ties: the lowest window index wins
    plan = make_window(shape, pool, strides, padding)
    out, argmax = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.int32)
    out_ref, argmax_ref = np.empty_like(out), np.empty_like(argmax)
    cpu.max_pool2d_forward(out, argmax, x, plan)
    ref.max_pool2d_forward(out_ref, argmax_ref, x, plan)
    np.testing.assert_array_equal(out, out_ref)
    np.testing.assert_array_equal(argmax, argmax_ref)
    dout = randn(rng, plan.out_shape)
    dx, dx_ref = np.empty_like(x), np.empty_like(x)
    cpu.max_pool2d_backward(dx, dout, argmax, plan)
    ref.max_pool2d_backward(dx_ref, dout, argmax_ref, plan)
    close(dx, dx_ref)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3), h=st.integers(1, 9), w=st.integers(1, 9), c=st.integers(1, 20),
       kh=st.integers(1, 4), kw=st.integers(1, 4), sh=st.integers(1, 3), sw=st.integers(1, 3),
       padding=st.sampled_from(["same", "valid"]), seed=st.integers(0, 2 ** 16))
def test_pooling_on_random_geometry(n, h, w, c, kh, kw, sh, sw, padding, seed):
    if padding == "valid" and (kh > h or kw > w):
        return                                             # no output: Keras rejects the layer
    rng = np.random.default_rng(seed)
    x = np.round(randn(rng, (n, h, w, c)) * 2) / 2         # coarse values: plenty of ties
    plan = make_window(x.shape, (kh, kw), (sh, sw), padding)
    results = []
    for backend in (cpu, ref):
        out, argmax = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.int32)
        backend.max_pool2d_forward(out, argmax, x, plan)
        dx = np.empty_like(x)
        backend.max_pool2d_backward(dx, out, argmax, plan)
        avg, davg = np.empty(plan.out_shape, np.float32), np.empty_like(x)
        backend.avg_pool2d_forward(avg, x, plan)
        backend.avg_pool2d_backward(davg, avg, plan)
        results.append((out, argmax, dx, avg, davg))
    for got, expected in zip(*results):
        close(got, expected)


def test_max_pool_padding_never_wins():
    x = np.full((1, 3, 3, 2), -np.inf, np.float32)
    x[0, 1, 1, 1] = -5.0
    plan = make_window(x.shape, (3, 3), (1, 1), "same")
    out, argmax = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.int32)
    cpu.max_pool2d_forward(out, argmax, x, plan)
    out_ref, argmax_ref = np.empty_like(out), np.empty_like(argmax)
    ref.max_pool2d_forward(out_ref, argmax_ref, x, plan)
    np.testing.assert_array_equal(argmax, argmax_ref)
    dx = np.empty_like(x)
    cpu.max_pool2d_backward(dx, np.ones_like(out), argmax, plan)
    assert dx.sum() == out.size                            # every gradient landed inside the input


@pytest.mark.parametrize("shape,pool,strides,padding", POOL_CASES)
def test_avg_pool(isa, shape, pool, strides, padding):
    rng = np.random.default_rng(sum(shape) + 1)
    x = randn(rng, shape)
    plan = make_window(shape, pool, strides, padding)
    out, out_ref = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.float32)
    cpu.avg_pool2d_forward(out, x, plan)
    ref.avg_pool2d_forward(out_ref, x, plan)
    close(out, out_ref)
    dout = randn(rng, plan.out_shape)
    dx, dx_ref = np.empty_like(x), np.empty_like(x)
    cpu.avg_pool2d_backward(dx, dout, plan)
    ref.avg_pool2d_backward(dx_ref, dout, plan)
    close(dx, dx_ref)


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 3, 5, 7), (4, 8, 8, 33), (8, 16, 16, 64)])
def test_global_avg_pool(isa, shape):
    rng = np.random.default_rng(sum(shape))
    x = randn(rng, shape)
    out, out_ref = np.empty((shape[0], shape[3]), np.float32), np.empty((shape[0], shape[3]), np.float32)
    cpu.global_avg_pool_forward(out, x)
    ref.global_avg_pool_forward(out_ref, x)
    close(out, out_ref)
    dx, dx_ref = np.empty_like(x), np.empty_like(x)
    cpu.global_avg_pool_backward(dx, out)
    ref.global_avg_pool_backward(dx_ref, out)
    close(dx, dx_ref)


@pytest.mark.parametrize("shape,pads", [((1, 3, 4, 2), (1, 2, 0, 3)), ((2, 5, 5, 3), (0, 0, 0, 0)),
                                        ((3, 8, 6, 16), (2, 1, 1, 2))])
def test_pad2d(shape, pads):
    rng = np.random.default_rng(sum(shape))
    x = randn(rng, shape)
    t, b, l, r = pads
    padded_shape = (shape[0], shape[1] + t + b, shape[2] + l + r, shape[3])
    out = np.full(padded_shape, np.nan, np.float32)        # the border must be written too
    out_ref = np.empty(padded_shape, np.float32)
    cpu.pad2d_forward(out, x, pads)
    ref.pad2d_forward(out_ref, x, pads)
    np.testing.assert_array_equal(out, out_ref)
    dx, dx_ref = np.empty_like(x), np.empty_like(x)
    cpu.pad2d_backward(dx, out_ref, pads)
    ref.pad2d_backward(dx_ref, out_ref, pads)
    np.testing.assert_array_equal(dx, dx_ref)


def test_pad2d_rejects_negative_pads():
    x = np.zeros((1, 2, 2, 1), np.float32)
    with pytest.raises(ValueError, match="pad2d_forward: pads must be 4 non-negative ints"):
        cpu.pad2d_forward(x, x, (0, 0, -1, 1))


@pytest.mark.parametrize("lead", [(1,), (3, 4), (2, 5, 5)])
def test_concat(lead):
    rng = np.random.default_rng(len(lead))
    xs = [randn(rng, lead + (w,)) for w in (1, 7, 16)]
    out = np.empty(lead + (24,), np.float32)
    cpu.concat_forward(out, xs)
    np.testing.assert_array_equal(out, np.concatenate(xs, axis=-1))
    dxs = [np.empty_like(x) for x in xs]
    cpu.concat_backward(dxs, out)
    for dx, x in zip(dxs, xs):
        np.testing.assert_array_equal(dx, x)
    with pytest.raises(ValueError, match="concat_forward: last axes of xs add up to 24, out has 25"):
        cpu.concat_forward(np.empty(lead + (25,), np.float32), xs)


# ------------------------------------------------------------------ batchnorm

BN_SHAPES = [(1, 1), (7, 3), (2, 5, 5, 17), (16, 8, 8, 32), (64, 100)]


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm(isa, shape, affine):
    rng = np.random.default_rng(sum(shape) + affine)
    c = shape[-1]
    x = randn(rng, shape, scale=3.0) + 2.0
    gamma, beta = (randn(rng, (c,)), randn(rng, (c,))) if affine else (None, None)
    results = {}
    for backend in (cpu, ref):
        out, mean, invstd = np.empty_like(x), np.empty(c, np.float32), np.empty(c, np.float32)
        moving_mean, moving_var = np.full(c, 0.5, np.float32), np.full(c, 2.0, np.float32)
        backend.batchnorm_forward_train(out, mean, invstd, x, gamma, beta, moving_mean, moving_var,
                                        0.9, 1e-3)
        infer = np.empty_like(x)
        backend.batchnorm_forward_infer(infer, x, gamma, beta, moving_mean, moving_var, 1e-3)
        dout = randn(np.random.default_rng(5), shape)
        dx = np.empty_like(x)
        dgamma, dbeta = (np.empty(c, np.float32), np.empty(c, np.float32)) if affine else (None, None)
        backend.batchnorm_backward(dx, dgamma, dbeta, dout, x, mean, invstd, gamma)
        results[backend.name] = [out, mean, invstd, moving_mean, moving_var, infer, dx]
        if affine:
            results[backend.name] += [dgamma, dbeta]
    for got, expected in zip(results["cpu"], results["numpy"]):
        close(got, expected, rtol=2e-4, atol=2e-4)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 300), c=st.integers(1, 150), seed=st.integers(0, 2 ** 16))
def test_row_ops_on_random_shapes(rows, c, seed):
    rng = np.random.default_rng(seed)
    x, dout = randn(rng, (rows, c), scale=3.0), randn(rng, (rows, c))
    gamma, beta = randn(rng, (c,)), randn(rng, (c,))
    results = []
    for backend in (cpu, ref):
        dbias, soft, dsoft = np.empty(c, np.float32), np.empty_like(x), np.empty_like(x)
        backend.bias_grad(dbias, x)
        backend.activation_forward(soft, x, "softmax")
        backend.activation_backward(dsoft, dout, soft, "softmax")
        out, mean, invstd = np.empty_like(x), np.empty(c, np.float32), np.empty(c, np.float32)
        backend.batchnorm_forward_train(out, mean, invstd, x, gamma, beta, np.zeros(c, np.float32),
                                        np.ones(c, np.float32), 0.9, 1e-3)
        dx, dgamma, dbeta = np.empty_like(x), np.empty(c, np.float32), np.empty(c, np.float32)
        backend.batchnorm_backward(dx, dgamma, dbeta, dout, x, mean, invstd, gamma)
        results.append((dbias, soft, dsoft, out, mean, invstd, dx, dgamma, dbeta))
    for got, expected in zip(*results):
        close(got, expected, rtol=2e-4, atol=2e-4)


# ------------------------------------------------------------------ dropout

def test_dropout_is_deterministic_and_keeps_the_right_fraction(isa):
    rng = np.random.default_rng(0)
    x = randn(rng, (300, 1001))
    rate = 0.3
    out, mask = np.empty_like(x), np.empty_like(x)
    cpu.dropout_forward(out, mask, x, rate, seed=1234)
    out2, mask2 = np.empty_like(x), np.empty_like(x)
    cpu.dropout_forward(out2, mask2, x, rate, seed=1234)
    np.testing.assert_array_equal(mask, mask2)
    np.testing.assert_array_equal(out, x * mask)
    assert set(np.unique(mask)) == {0.0, np.float32(1 / (1 - rate))}
    keep = (mask > 0).mean()
    assert abs(keep - (1 - rate)) < 0.005                  # 300k draws: 5 sigma is 0.004
    # neighbouring elements and rows are not correlated
    flat = (mask > 0).astype(np.float64).ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 0.01
    cpu.dropout_forward(out2, mask2, x, rate, seed=1235)
    assert (mask != mask2).mean() > 0.3
    cpu.dropout_forward(out2, mask2, x, 0.0, seed=7)
    np.testing.assert_array_equal(out2, x)


def test_dropout_mask_depends_only_on_seed_and_index():
    big, small = np.ones(5000, np.float32), np.ones(77, np.float32)
    out_big, mask_big = np.empty_like(big), np.empty_like(big)
    out_small, mask_small = np.empty_like(small), np.empty_like(small)
    cpu.dropout_forward(out_big, mask_big, big, 0.5, seed=2 ** 40 + 3)
    cpu.dropout_forward(out_small, mask_small, small, 0.5, seed=2 ** 40 + 3)
    np.testing.assert_array_equal(mask_small, mask_big[:77])
    threads = lib.minidl_num_threads()
    try:
        lib.minidl_set_num_threads(1)
        one_thread = np.empty_like(big)
        cpu.dropout_forward(np.empty_like(big), one_thread, big, 0.5, seed=2 ** 40 + 3)
    finally:
        lib.minidl_set_num_threads(threads)
    np.testing.assert_array_equal(one_thread, mask_big)


def test_dropout_mask_is_the_same_on_every_isa():
    x = np.ones(64 * 300 + 37, np.float32)                 # whole blocks and a partial one
    masks = []
    for isa in ISAS:
        before = lib.minidl_cpu_isa()
        lib.minidl_set_isa(isa)
        try:
            mask = np.empty_like(x)
            cpu.dropout_forward(np.empty_like(x), mask, x, 0.25, seed=987654321012)
        finally:
            lib.minidl_set_isa(before)
        masks.append(mask)
    for mask in masks[1:]:
        np.testing.assert_array_equal(mask, masks[0])


def philox4x32_10(counter, key):
    """Philox4x32-10 in plain Python, counter (4 words) and key (2 words): the test's own oracle."""
    c = list(counter)
    k0, k1 = key
    mask = 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k1) & mask, p0 & mask]
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return c


def test_dropout_uses_philox_with_the_documented_layout(isa):
    # Known-answer vector of the Random123 distribution: counter 0, key 0.
    assert philox4x32_10([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    seed, rate, n = 2 ** 33 + 12345, 0.5, 64 * 3 + 5
    expected = np.empty(n, np.float32)
    for e in range(n):
        block, j, lane = e // 64, (e % 64) // 16, e % 16
        counter = block * 16 + lane
        word = philox4x32_10([counter & 0xFFFFFFFF, counter >> 32, 0, 0],
                             [seed & 0xFFFFFFFF, seed >> 32])[j]
        expected[e] = 2.0 if (word >> 8) / 2 ** 24 < 1 - rate else 0.0
    mask = np.empty(n, np.float32)
    cpu.dropout_forward(np.empty(n, np.float32), mask, np.ones(n, np.float32), rate, seed)
    np.testing.assert_array_equal(mask, expected)


def test_dropout_rejects_bad_rate():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"dropout_forward: rate must be in \[0, 1\), got 1.0"):
        cpu.dropout_forward(x, x.copy(), x, 1.0, seed=0)


# ------------------------------------------------------------------ losses

LOSS_SHAPES = [(1, 1), (1, 10), (7, 3), (64, 10), (33, 1000)]


def targets_for(rng, shape, sparse):
    n, k = shape
    if sparse:
        return rng.integers(0, k, n).astype(np.int32)
    t = rng.random(shape).astype(np.float32)
    return (t / t.sum(axis=1, keepdims=True)).astype(np.float32)


def run_both(method, shapes, *inputs, **kw):
    """Call `method` on both backends with fresh float32 outputs of `shapes`; returns both results."""
    results = []
    for backend in (cpu, ref):
        outs = [np.full(s, np.nan, np.float32) for s in shapes]
        getattr(backend, method)(*outs, *inputs, **kw)
        results.append(outs)
    return results


@pytest.mark.parametrize("shape", LOSS_SHAPES)
@pytest.mark.parametrize("sparse", [True, False])
def test_softmax_cross_entropy(isa, shape, sparse):
    rng = np.random.default_rng(sum(shape) + sparse)
    logits = randn(rng, shape, scale=5.0)
    targets = targets_for(rng, shape, sparse)
    got, expected = run_both("softmax_cross_entropy_forward", [shape, shape[:1]], logits, targets)
    for a, b in zip(got, expected):
        close(a, b, rtol=1e-5, atol=1e-5)
    probs = expected[0]
    got, expected = run_both("softmax_cross_entropy_backward", [shape], probs, targets, 0.25)
    close(got[0], expected[0])


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (5, 4, 9), (64, 100)])
def test_sigmoid_cross_entropy_and_mse(shape):
    rng = np.random.default_rng(sum(shape))
    logits = randn(rng, shape, scale=6.0)
    targets = rng.random(shape).astype(np.float32)
    got, expected = run_both("sigmoid_cross_entropy_forward", [shape, shape[:-1]], logits, targets)
    for a, b in zip(got, expected):
        close(a, b, rtol=1e-5, atol=1e-6)
    got, expected = run_both("sigmoid_cross_entropy_backward", [shape], expected[0], targets, 0.5)
    close(got[0], expected[0])
    got, expected = run_both("mean_squared_error_forward", [shape[:-1]], logits, targets)
    close(got[0], expected[0], rtol=1e-5, atol=1e-5)
    got, expected = run_both("mean_squared_error_backward", [shape], logits, targets, 0.5)
    close(got[0], expected[0])


@pytest.mark.parametrize("shape", LOSS_SHAPES)
@pytest.mark.parametrize("mode", ["sparse", "dense", "binary"])
def test_cross_entropy_with_clipping(shape, mode):
    rng = np.random.default_rng(sum(shape))
    probs = rng.random(shape).astype(np.float32)
    probs.flat[::5] = 0.0                                  # the clip is active here ...
    probs.flat[1::7] = 1.0                                 # ... and here
    if mode == "binary":
        targets = (rng.random(shape) > 0.5).astype(np.float32)
    else:
        targets = targets_for(rng, shape, mode == "sparse")
    binary = mode == "binary"
    loss_shape = shape[:1]
    got, expected = run_both("cross_entropy_forward", [loss_shape], probs, targets, binary)
    close(got[0], expected[0], rtol=1e-5, atol=1e-5)
    got, expected = run_both("cross_entropy_backward", [shape], probs, targets, binary, 0.5)
    close(got[0], expected[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method,args", [
    ("softmax_cross_entropy_forward", (np.empty((3, 4), np.float32), np.empty(3, np.float32))),
    ("cross_entropy_forward", (np.empty(3, np.float32),)),
])
def test_sparse_targets_out_of_range_raise(method, args):
    scores = np.zeros((3, 4), np.float32)
    targets = np.array([0, 4, 1], np.int32)
    extra = (False,) if method == "cross_entropy_forward" else ()
    with pytest.raises(ValueError, match=rf"{method}: sparse targets must lie in \[0, 4\), got 4 in row 1"):
        getattr(cpu, method)(*args, scores, targets, *extra)


# ------------------------------------------------------------------ metrics

@pytest.mark.parametrize("n", SIZES)
def test_sum_and_all_finite(isa, n):
    rng = np.random.default_rng(n)
    x = randn(rng, n)
    out = np.zeros(1, np.float32)
    cpu.sum(out, x)
    close(out[0], x.sum(dtype=np.float64), rtol=1e-5, atol=1e-4)
    cpu.sum(out, x, accumulate=True)
    close(out[0], 2 * x.sum(dtype=np.float64), rtol=1e-5, atol=1e-4)
    cpu.all_finite(out, x)
    assert out[0] == 1.0
    for bad in (np.inf, -np.inf, np.nan):
        y = x.copy()
        y[-1] = bad                                        # in the vector tail
        cpu.all_finite(out, y)
        assert out[0] == 0.0


@pytest.mark.parametrize("shape", [(1, 1), (9, 5), (100, 10), (33, 1000)])
def test_accuracies(shape):
    rng = np.random.default_rng(sum(shape))
    pred = np.round(rng.random(shape) * 4).astype(np.float32)   # many ties
    for targets in (targets_for(rng, shape, True), np.round(targets_for(rng, shape, False) * 8)):
        targets = targets.astype(targets.dtype)
        for method, extra in (("categorical_accuracy", ()), ("top_k_accuracy", (1,)),
                              ("top_k_accuracy", (3,))):
            outs = []
            for backend in (cpu, ref):
                out = np.array([2.0], np.float32)
                getattr(backend, method)(out, pred, targets, *extra, accumulate=True)
                outs.append(out[0])
            assert outs[0] == outs[1], (method, extra)
    probs = rng.random(shape).astype(np.float32)
    binary_targets = (rng.random(shape) > 0.5).astype(np.float32)
    outs = []
    for backend in (cpu, ref):
        out = np.zeros(1, np.float32)
        backend.binary_accuracy(out, probs, binary_targets)
        outs.append(out[0])
    assert outs[0] == outs[1]


# ------------------------------------------------------------------ optimizers

def optimizer_cases():
    return [
        ("sgd_update", ("velocity",), dict(lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0)),
        ("sgd_update", ("velocity",), dict(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.01)),
        ("sgd_update", ("velocity",), dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.0)),
        ("adam_update", ("m", "v"), dict(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                                         weight_decay=0.004)),
        ("rmsprop_update", ("ms", "mom"), dict(lr=1e-3, rho=0.9, momentum=0.0, epsilon=1e-7,
                                               weight_decay=0.0)),
        ("rmsprop_update", ("ms", "mom"), dict(lr=1e-3, rho=0.9, momentum=0.5, epsilon=1e-7,
                                               weight_decay=0.1)),
        ("adagrad_update", ("acc",), dict(lr=0.01, epsilon=1e-7, weight_decay=0.0)),
    ]


@pytest.mark.parametrize("case", range(len(optimizer_cases())))
@pytest.mark.parametrize("n", [1, 31, 70001])
def test_optimizer_updates_over_several_steps(isa, case, n):
    method, state_names, hyper = optimizer_cases()[case]
    rng = np.random.default_rng(case * 10 + n)
    w0 = randn(rng, n)
    grads = [randn(rng, n) for _ in range(5)]
    finals = []
    for backend in (cpu, ref):
        w = w0.copy()
        state = {}
        for name in state_names:
            unused = (name == "velocity" and not hyper["momentum"]) or (name == "mom" and not hyper["momentum"])
            state[name] = None if unused else np.zeros(n, np.float32)
        if method == "adagrad_update":
            state["acc"] = np.full(n, 0.1, np.float32)
        for step, g in enumerate(grads, start=1):
            kwargs = dict(hyper, step=step) if method == "adam_update" else hyper
            getattr(backend, method)(w, g.copy(), *state.values(), **kwargs)
        finals.append([w] + [s for s in state.values() if s is not None])
    for got, expected in zip(*finals):
        close(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 17, 70001])
def test_clipping(isa, n):
    rng = np.random.default_rng(n)
    g = randn(rng, n, scale=3.0)
    for clip, value in (("clip_by_value", 1.5), ("clip_by_norm", 2.0), ("clip_by_norm", 1e6)):
        got, expected = g.copy(), g.copy()
        getattr(cpu, clip)(got, value)
        getattr(ref, clip)(expected, value)
        close(got, expected)


def test_sgd_momentum_without_velocity_raises():
    w = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="sgd_update: momentum=0.9 needs a velocity tensor"):
        cpu.sgd_update(w, w, None, 0.1, 0.9, False, 0.0)


# ------------------------------------------------------------------ argument checks, info, ISA

def test_errors_name_the_op_the_argument_and_the_shapes():
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"add: out must have shape \(2, 3\), got \(3, 2\)"):
        cpu.add(np.zeros((3, 2), np.float32), a, a)
    with pytest.raises(ValueError, match=r"multiply: b must be float32, got float64 of shape \(2, 3\)"):
        cpu.multiply(a, a, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"bias_add: x of shape \(3, 2\) must be C-contiguous"):
        cpu.bias_add(a.T, a.T, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="sum: x must be a numpy float32 array"):
        cpu.sum(np.zeros(1, np.float32), [1.0, 2.0])


def test_info_reports_isa_and_threads():
    info = cpu.info()
    assert info["name"] == "cpu"
    assert info["isa"] == ISA_NAMES[lib.minidl_cpu_isa()]
    assert info["threads"] == lib.minidl_num_threads() >= 1


@pytest.mark.parametrize("isa_name", [ISA_NAMES[i] for i in ISAS])
def test_environment_selects_the_isa_in_a_fresh_process(isa_name):
    code = ("import numpy as np; from minidl.backends.cpu import create; b = create(); "
            "x = np.linspace(-3, 3, 101, dtype=np.float32); o = np.empty_like(x); "
            "b.activation_forward(o, x, 'tanh'); "
            "print(b.info()['isa'], float(np.abs(o - np.tanh(x)).max()))")
    env = dict(os.environ, MINIDL_CPU_ISA=isa_name)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    name, error = result.stdout.split()
    assert name == isa_name
    assert float(error) < 1e-6
