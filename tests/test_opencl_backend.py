"""The opencl backend against the numpy reference backend, op by op, on odd shapes.

Skipped as a whole only when pyopencl is missing or no OpenCL platform exists here.
Tuning is disabled (MINIDL_OPENCL_TUNE=0) so that the default GEMM kernel is used,
except in the tuner tests, which time a tiny candidate set in a temporary MINIDL_HOME.
"""

import json
import os

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

from minidl.backends.base import BackendUnavailable, make_window  # noqa: E402
from minidl.backends.numpy_backend import NumpyBackend  # noqa: E402
from minidl.backends.opencl.tensor import CLTensor  # noqa: E402


@pytest.fixture(scope="module")
def cl_be():
    os.environ["MINIDL_OPENCL_TUNE"] = "0"
    from minidl.backends.opencl import create
    try:
        return create()
    except BackendUnavailable as exc:
        pytest.skip(f"no OpenCL platform here: {exc}")


SMALL_TILES = {"family": "tiled", "TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "VWN": 4}


@pytest.fixture(scope="module")
def tiled_be(cl_be):
    """The same device with the GPU-style GEMM family (small tiles, so that tests see ragged ones)."""
    from minidl.backends.opencl.backend import OpenCLBackend
    return OpenCLBackend(cl_be.rt, gemm_params=SMALL_TILES)


@pytest.fixture(scope="module")
def np_be():
    return NumpyBackend()


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def run_both(cl_be, np_be, op, *args, rtol=1e-4, atol=1e-5, **kwargs):
    """Run op on both backends with the same numpy arrays (lists of arrays allowed) as tensors;
    compare every tensor argument afterwards (outputs and in-place updates alike).
    Returns the opencl results as numpy arrays, in argument order."""
    def to_backend(be, arg):
        if isinstance(arg, np.ndarray):
            return be.from_numpy(arg.copy(), dtype=arg.dtype)
        if isinstance(arg, list):
            return [to_backend(be, a) for a in arg]
        return arg

    cl_args = [to_backend(cl_be, a) for a in args]
    np_args = [to_backend(np_be, a) for a in args]
    getattr(cl_be, op)(*cl_args, **kwargs)
    getattr(np_be, op)(*np_args, **kwargs)
    results = []
    for index, (arg, cl_arg, np_arg) in enumerate(zip(args, cl_args, np_args)):
        pairs = list(zip(cl_arg, np_arg)) if isinstance(arg, list) else [(cl_arg, np_arg)]
        for c, n in pairs:
            if isinstance(c, CLTensor):
                got = cl_be.to_numpy(c)
                results.append(got)
                np.testing.assert_allclose(got, n, rtol=rtol, atol=atol,
                                           err_msg=f"{op}: argument {index} differs")
    return results


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------------------ gemm
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (8, 32, 5), (37, 53, 29), (70, 97, 130), (16, 64, 0)])
@pytest.mark.parametrize("family", ["direct", "tiled"])
def test_gemm_matches_numpy(cl_be, tiled_be, np_be, rng, family, m, n, k, trans_a, trans_b):
    backend = cl_be if family == "direct" else tiled_be
    if family == "direct":
        assert backend.info()["gemm"]["family"] == "direct"   # PoCL's default; tests run untuned
    a = randn(rng, *((k, m) if trans_a else (m, k)))
    b = randn(rng, *((n, k) if trans_b else (k, n)))
    run_both(backend, np_be, "gemm", randn(rng, m, n), a, b, 0.5, 1.5, trans_a, trans_b,
             rtol=1e-4, atol=1e-4)


def test_gemm_beta_zero_never_reads_out(cl_be, rng):
    a, b = randn(rng, 33, 17), randn(rng, 17, 65)
    out = cl_be.from_numpy(np.full((33, 65), np.nan, np.float32))
    cl_be.gemm(out, cl_be.from_numpy(a), cl_be.from_numpy(b), 2.0, 0.0)
    np.testing.assert_allclose(cl_be.to_numpy(out), 2.0 * a @ b, rtol=1e-4, atol=1e-4)


def test_gemm_rejects_mismatched_shapes(cl_be):
    with pytest.raises(ValueError, match=r"gemm.*\(3, 4\)"):
        cl_be.gemm(cl_be.empty((3, 5)), cl_be.empty((3, 4)), cl_be.empty((5, 5)))


def test_other_gemm_parameter_sets_match_numpy(cl_be, rng):
    from minidl.backends.opencl.gemm import Gemm
    narrow = {"family": "direct", "RM": 3, "VW": 4, "VN": 2, "local": [1, 1]}
    wide_tiles = {"family": "tiled", "TSM": 32, "TSN": 64, "TSK": 4, "WPTM": 4, "WPTN": 8, "VWN": 8}
    for params in (narrow, wide_tiles):
        engine = Gemm(cl_be.rt, params)
        for trans_a in (False, True):
            m, n, k = 45, 38, 21
            a = randn(rng, *((k, m) if trans_a else (m, k)))
            b, c = randn(rng, k, n), randn(rng, m, n)
            out = cl_be.from_numpy(c)
            engine.run(out, cl_be.from_numpy(a), cl_be.from_numpy(b), m, n, k, trans_a, 1.25, -0.5)
            expected = 1.25 * ((a.T if trans_a else a) @ b) - 0.5 * c
            np.testing.assert_allclose(cl_be.to_numpy(out), expected, rtol=1e-4, atol=1e-4,
                                       err_msg=str(params))


# ----------------------------------------------------------------------- elementwise
def test_elementwise_ops(cl_be, np_be, rng):
    x, y = randn(rng, 7, 13), randn(rng, 7, 13)
    run_both(cl_be, np_be, "add", randn(rng, 7, 13), x, y)
    run_both(cl_be, np_be, "axpby", randn(rng, 7, 13), 0.3, x, -2.0, y)
    run_both(cl_be, np_be, "multiply", randn(rng, 7, 13), x, y)
    run_both(cl_be, np_be, "bias_add", randn(rng, 5, 3, 11), randn(rng, 5, 3, 11), randn(rng, 11))
    run_both(cl_be, np_be, "bias_grad", randn(rng, 11), randn(rng, 5, 3, 11))


def test_outputs_may_alias_inputs(cl_be, rng):
    x, y = randn(rng, 101), randn(rng, 101)
    tx, ty = cl_be.from_numpy(x), cl_be.from_numpy(y)
    cl_be.axpby(tx, 2.0, tx, 3.0, ty)
    cl_be.multiply(ty, ty, tx)
    np.testing.assert_allclose(cl_be.to_numpy(ty), y * (2 * x + 3 * y), rtol=1e-5, atol=1e-6)


def test_copy_and_fill(cl_be, rng):
    x = randn(rng, 3, 5)
    out = cl_be.empty((15,))
    cl_be.copy(out, cl_be.from_numpy(x))
    np.testing.assert_array_equal(cl_be.to_numpy(out), x.ravel())
    labels = cl_be.empty((9,), "int32")
    cl_be.fill(labels, 4)
    np.testing.assert_array_equal(cl_be.to_numpy(labels), np.full(9, 4, np.int32))
    np.testing.assert_array_equal(cl_be.to_numpy(cl_be.zeros((2, 2))), np.zeros((2, 2)))


@pytest.mark.parametrize("name", ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "softmax"])
def test_activations(cl_be, np_be, rng, name):
    x = 3 * randn(rng, 9, 17)
    y = run_both(cl_be, np_be, "activation_forward", randn(rng, 9, 17), x, name, alpha=0.2)[0]
    run_both(cl_be, np_be, "activation_backward", randn(rng, 9, 17), randn(rng, 9, 17), y, name,
             alpha=0.2)


# ----------------------------------------------------------------------- convolution
CONV_CASES = [
    # (n, h, w, c), (kh, kw, filters), strides, padding
    ((2, 9, 7, 3), (3, 3, 5), (1, 1), "same"),
    ((1, 8, 8, 2), (3, 3, 4), (2, 2), "same"),      # asymmetric: the odd pixel goes after
    ((3, 10, 9, 4), (5, 2, 33), (2, 3), "valid"),
    ((2, 6, 5, 7), (1, 1, 6), (1, 1), "valid"),     # pointwise: no im2col
    ((2, 7, 7, 1), (4, 4, 8), (3, 2), "same"),
    ((2, 7, 6, 3), (4, 2, 5), (1, 1), "same"),      # stride 1, even kernel: asymmetric padding
    ((1, 6, 7, 2), (3, 2, 3), (1, 1), "valid"),
    # 8 channels or more: the direct family's implicit GEMM (forward, and backward-data when F >= 8)
    ((2, 9, 8, 12), (3, 3, 10), (1, 1), "same"),
    ((3, 7, 9, 9), (2, 3, 40), (2, 2), "same"),
    ((1, 5, 6, 16), (5, 5, 33), (1, 1), "valid"),
    ((8, 24, 24, 16), (3, 3, 32), (1, 1), "same"),  # 4608 pixels: filter gradient split in slices
]


@pytest.mark.parametrize("in_shape,kernel,strides,padding", CONV_CASES)
@pytest.mark.parametrize("family", ["direct", "tiled"])
def test_conv2d(cl_be, tiled_be, np_be, rng, family, in_shape, kernel, strides, padding):
    check_conv2d(cl_be if family == "direct" else tiled_be, np_be, rng, in_shape, kernel,
                 strides, padding)


def check_conv2d(cl_be, np_be, rng, in_shape, kernel, strides, padding):
    """Forward, backward-data and backward-filter against the numpy backend; the scratch
    buffers are made once and reused."""
    kh, kw, f = kernel
    c = in_shape[3]
    plan_cl = cl_be.conv2d_plan(in_shape, (kh, kw, c, f), strides, padding)
    plan_np = np_be.conv2d_plan(in_shape, (kh, kw, c, f), strides, padding)
    x, weight, bias = randn(rng, *in_shape), randn(rng, kh, kw, c, f), randn(rng, f)
    dout = randn(rng, *plan_cl.out_shape)
    for op, args in (
        ("conv2d_forward", (np.empty(plan_cl.out_shape, np.float32), x, weight, bias)),
        ("conv2d_backward_data", (np.empty(in_shape, np.float32), dout, weight)),
        ("conv2d_backward_filter", (np.empty((kh, kw, c, f), np.float32), np.empty(f, np.float32),
                                    dout, x)),
    ):
        cl_args = [cl_be.from_numpy(a) for a in args]
        np_args = [np_be.from_numpy(a) for a in args]
        getattr(cl_be, op)(*cl_args, plan_cl)
        getattr(np_be, op)(*np_args, plan_np)
        for index, (c_arg, n_arg) in enumerate(zip(cl_args, np_args)):
            # float32 sums over thousands of pixels: allow for the largest value's rounding
            atol = 1e-4 + 1e-5 * float(np.abs(n_arg).max())
            np.testing.assert_allclose(cl_be.to_numpy(c_arg), n_arg, rtol=1e-4, atol=atol,
                                       err_msg=f"{op} argument {index}")
    # the scratch is made once per plan (and per backend for im2col) and reused by later calls
    scratch = dict(plan_cl.scratch)
    im2col = cl_be._scratch.get("im2col")
    cl_be.conv2d_forward(cl_be.empty(plan_cl.out_shape), cl_be.from_numpy(x),
                         cl_be.from_numpy(weight), None, plan_cl)
    cl_be.conv2d_backward_data(cl_be.empty(in_shape), cl_be.from_numpy(dout),
                               cl_be.from_numpy(weight), plan_cl)
    assert all(plan_cl.scratch[k] is v for k, v in scratch.items())
    assert cl_be._scratch.get("im2col") is im2col


def _random_geometry(seed):
    """A random convolution: odd sizes, batch from 1, kernel up to 4, stride up to 3, either padding."""
    rng = np.random.default_rng(seed)
    kh, kw = rng.integers(1, 5, 2)
    sh, sw = rng.integers(1, 4, 2)
    n, c, f = rng.integers(1, 4), rng.integers(1, 13), rng.integers(1, 40)
    h, w = kh + rng.integers(0, 9), kw + rng.integers(0, 9)
    padding = ("same", "valid")[seed % 2]
    return (int(n), int(h), int(w), int(c)), (int(kh), int(kw), int(f)), (int(sh), int(sw)), padding


@pytest.mark.parametrize("seed", range(8))
def test_conv2d_random_geometries(cl_be, np_be, rng, seed):
    in_shape, kernel, strides, padding = _random_geometry(seed)
    check_conv2d(cl_be, np_be, rng, in_shape, kernel, strides, padding)
    plan = make_window(in_shape, kernel[:2], strides, padding)
    x = randn(rng, *in_shape)
    run_both(cl_be, np_be, "avg_pool2d_forward", np.zeros(plan.out_shape, np.float32), x, plan)
    run_both(cl_be, np_be, "avg_pool2d_backward", np.zeros(in_shape, np.float32),
             randn(rng, *plan.out_shape), plan)


def test_conv2d_rejects_wrong_input_shape(cl_be):
    plan = cl_be.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    with pytest.raises(ValueError, match=r"conv2d_forward: x .*\(2, 5, 5, 3\)"):
        cl_be.conv2d_forward(cl_be.empty((2, 5, 5, 4)), cl_be.empty((2, 5, 5, 4)),
                             cl_be.empty((3, 3, 3, 4)), None, plan)


# --------------------------------------------------------------------------- pooling
POOL_CASES = [
    ((2, 7, 9, 3), (2, 2), (2, 2), "valid"),
    ((1, 7, 8, 2), (3, 3), (2, 2), "same"),   # overlapping windows, asymmetric padding
    ((3, 5, 6, 4), (3, 2), (1, 1), "same"),
    ((2, 4, 4, 1), (4, 4), (4, 4), "valid"),
]


@pytest.mark.parametrize("in_shape,pool,strides,padding", POOL_CASES)
def test_pooling(cl_be, np_be, rng, in_shape, pool, strides, padding):
    plan = make_window(in_shape, pool, strides, padding)
    x = randn(rng, *in_shape)
    dout = randn(rng, *plan.out_shape)
    empty_out = np.empty(plan.out_shape, np.float32)
    # each backend routes its own argmax encoding back in max_pool2d_backward
    cl_out, cl_argmax = cl_be.empty(plan.out_shape), cl_be.empty(plan.out_shape, "int32")
    np_out, np_argmax = np_be.empty(plan.out_shape), np_be.empty(plan.out_shape, "int32")
    cl_be.max_pool2d_forward(cl_out, cl_argmax, cl_be.from_numpy(x), plan)
    np_be.max_pool2d_forward(np_out, np_argmax, x, plan)
    np.testing.assert_allclose(cl_be.to_numpy(cl_out), np_out)
    cl_dx = cl_be.empty(in_shape)
    cl_be.max_pool2d_backward(cl_dx, cl_be.from_numpy(dout), cl_argmax, plan)
    np_dx = np_be.empty(in_shape)
    np_be.max_pool2d_backward(np_dx, dout, np_argmax, plan)
    np.testing.assert_allclose(cl_be.to_numpy(cl_dx), np_dx, rtol=1e-5, atol=1e-6)
    run_both(cl_be, np_be, "avg_pool2d_forward", empty_out, x, plan)
    run_both(cl_be, np_be, "avg_pool2d_backward", np.empty(in_shape, np.float32), dout, plan)


def test_global_pool_pad_and_concat(cl_be, np_be, rng):
    x = randn(rng, 3, 5, 4, 6)
    run_both(cl_be, np_be, "global_avg_pool_forward", randn(rng, 3, 6), x)
    run_both(cl_be, np_be, "global_avg_pool_backward", randn(rng, 3, 5, 4, 6), randn(rng, 3, 6))
    pads = (1, 2, 0, 3)
    run_both(cl_be, np_be, "pad2d_forward", randn(rng, 3, 8, 7, 6), x, pads)
    run_both(cl_be, np_be, "pad2d_backward", randn(rng, 3, 5, 4, 6), randn(rng, 3, 8, 7, 6), pads)
    pieces = [randn(rng, 2, 3, 4), randn(rng, 2, 3, 1), randn(rng, 2, 3, 5)]
    run_both(cl_be, np_be, "concat_forward", randn(rng, 2, 3, 10), pieces)
    run_both(cl_be, np_be, "concat_backward", [randn(rng, *p.shape) for p in pieces],
             randn(rng, 2, 3, 10))


# ------------------------------------------------------------------- normalization
@pytest.mark.parametrize("shape", [(5, 3, 4, 7), (130, 3), (1, 1, 1, 2)])
def test_batchnorm(cl_be, np_be, rng, shape):
    c = shape[-1]
    x = 2 + 3 * randn(rng, *shape)
    gamma, beta = randn(rng, c), randn(rng, c)
    mean, invstd = randn(rng, c), randn(rng, c)
    results = run_both(cl_be, np_be, "batchnorm_forward_train", randn(rng, *shape), mean, invstd,
                       x, gamma, beta, randn(rng, c), np.abs(randn(rng, c)), 0.9, 1e-3,
                       rtol=1e-4, atol=1e-4)
    mean, invstd = results[1], results[2]
    run_both(cl_be, np_be, "batchnorm_forward_infer", randn(rng, *shape), x, gamma, beta,
             randn(rng, c), np.abs(randn(rng, c)), 1e-3, rtol=1e-4, atol=1e-4)
    run_both(cl_be, np_be, "batchnorm_backward", randn(rng, *shape), randn(rng, c), randn(rng, c),
             randn(rng, *shape), x, mean, invstd, gamma, rtol=1e-3, atol=1e-4)


# --------------------------------------------------------------------------- dropout
def test_dropout_is_a_seeded_bernoulli_mask(cl_be, rng):
    x = randn(rng, 301, 67)
    tx = cl_be.from_numpy(x)
    out, mask = cl_be.empty(x.shape), cl_be.empty(x.shape)
    cl_be.dropout_forward(out, mask, tx, 0.3, 12345)
    m1, o1 = cl_be.to_numpy(mask), cl_be.to_numpy(out)
    assert set(np.unique(m1)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((m1 == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(o1, x * m1, rtol=1e-6)
    cl_be.dropout_forward(out, mask, tx, 0.3, 12345)
    np.testing.assert_array_equal(cl_be.to_numpy(mask), m1)
    cl_be.dropout_forward(out, mask, tx, 0.3, 2 ** 40 + 12345)   # the high half counts too
    assert (cl_be.to_numpy(mask) != m1).mean() > 0.3
    cl_be.dropout_forward(out, mask, tx, 0.0, 1)
    np.testing.assert_array_equal(cl_be.to_numpy(out), x)
    with pytest.raises(ValueError, match="rate"):
        cl_be.dropout_forward(out, mask, tx, 1.0, 1)


# ---------------------------------------------------------------------------- losses
def _targets(rng, rows, k, kind):
    if kind == "sparse":
        return rng.integers(0, k, rows).astype(np.int32)
    t = rng.random((rows, k)).astype(np.float32)
    return t / t.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_softmax_and_cross_entropy_losses(cl_be, np_be, rng, kind):
    rows, k = 13, 9
    logits = 4 * randn(rng, rows, k)
    t = _targets(rng, rows, k, kind)
    probs = run_both(cl_be, np_be, "softmax_cross_entropy_forward", randn(rng, rows, k),
                     randn(rng, rows), logits, t)[0]
    run_both(cl_be, np_be, "softmax_cross_entropy_backward", randn(rng, rows, k), probs, t, 0.25)
    probs[0, :2] = [0.0, 1.0]   # both clip limits are hit
    run_both(cl_be, np_be, "cross_entropy_forward", randn(rng, rows), probs, t, False)
    run_both(cl_be, np_be, "cross_entropy_backward", randn(rng, rows, k), probs, t, False, 0.5,
             rtol=1e-4, atol=1e-4)


def test_binary_losses(cl_be, np_be, rng):
    rows, k = 11, 3
    logits = 5 * randn(rng, rows, k)
    t = (rng.random((rows, k)) > 0.5).astype(np.float32)
    probs = run_both(cl_be, np_be, "sigmoid_cross_entropy_forward", randn(rng, rows, k),
                     randn(rng, rows), logits, t)[0]
    run_both(cl_be, np_be, "sigmoid_cross_entropy_backward", randn(rng, rows, k), probs, t, 0.5)
    probs[0, 0] = 1.0
    run_both(cl_be, np_be, "cross_entropy_forward", randn(rng, rows), probs, t, True)
    run_both(cl_be, np_be, "cross_entropy_backward", randn(rng, rows, k), probs, t, True, 0.5,
             rtol=1e-4, atol=1e-4)
    pred = randn(rng, rows, k)
    run_both(cl_be, np_be, "mean_squared_error_forward", randn(rng, rows), pred, t)
    run_both(cl_be, np_be, "mean_squared_error_backward", randn(rng, rows, k), pred, t, 0.1)


# ------------------------------------------------------------------------ reductions
def test_sum_and_metrics(cl_be, np_be, rng):
    x = randn(rng, 1000, 37)
    run_both(cl_be, np_be, "sum", np.zeros(1, np.float32), x, rtol=1e-4, atol=1e-3)
    run_both(cl_be, np_be, "sum", np.full(1, 5.0, np.float32), x, accumulate=True, rtol=1e-4, atol=1e-3)
    pred = np.round(randn(rng, 50, 6))   # rounding makes ties
    for t in (_targets(rng, 50, 6, "sparse"), np.round(randn(rng, 50, 6))):
        run_both(cl_be, np_be, "categorical_accuracy", np.full(1, 2.0, np.float32), pred, t,
                 accumulate=True)
        for k in (1, 2, 5):
            run_both(cl_be, np_be, "top_k_accuracy", np.zeros(1, np.float32), pred, t, k)
    probs = rng.random((31, 5)).astype(np.float32)
    labels = (rng.random((31, 5)) > 0.5).astype(np.float32)
    run_both(cl_be, np_be, "binary_accuracy", np.zeros(1, np.float32), probs, labels)


def test_all_finite(cl_be, np_be, rng):
    x = randn(rng, 999)
    run_both(cl_be, np_be, "all_finite", np.zeros(1, np.float32), x)
    for bad in (np.inf, -np.inf, np.nan):
        y = x.copy()
        y[517] = bad
        assert run_both(cl_be, np_be, "all_finite", np.zeros(1, np.float32), y)[0][0] == 0.0


# ------------------------------------------------------------------------ optimizers
@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd(cl_be, np_be, rng, momentum, nesterov):
    w, g = randn(rng, 77), randn(rng, 77)
    velocity = randn(rng, 77) if momentum else None
    run_both(cl_be, np_be, "sgd_update", w, g, velocity, 0.1, momentum, nesterov, 0.01)


def test_adaptive_optimizers(cl_be, np_be, rng):
    shape = (19, 7)
    w, g = randn(rng, *shape), randn(rng, *shape)
    run_both(cl_be, np_be, "adam_update", w, g, randn(rng, *shape), np.abs(randn(rng, *shape)),
             0.01, 0.9, 0.999, 1e-7, 3, 0.004, rtol=1e-4, atol=1e-5)
    for mom in (None, randn(rng, *shape)):
        run_both(cl_be, np_be, "rmsprop_update", w, g, np.abs(randn(rng, *shape)), mom, 0.01,
                 0.9, 0.5 if mom is not None else 0.0, 1e-7, 0.0, rtol=1e-4, atol=1e-5)
    run_both(cl_be, np_be, "adagrad_update", w, g, np.abs(randn(rng, *shape)), 0.1, 1e-7, 0.01,
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("clipnorm", [0.5, 1e3])
def test_clipping(cl_be, np_be, rng, clipnorm):
    g = 3 * randn(rng, 1001)
    run_both(cl_be, np_be, "clip_by_value", g, 1.5)
    cl_be.reset_stats()
    tg = cl_be.from_numpy(g)
    cl_be.clip_by_norm(tg, clipnorm)
    assert cl_be.stats()["d2h_count"] == 0   # the norm never left the device
    run_both(cl_be, np_be, "clip_by_norm", g, clipnorm, rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------------- memory, traffic
def test_transfer_counters_and_views(cl_be, rng):
    cl_be.synchronize()
    cl_be.reset_stats()
    x = randn(rng, 4, 6)
    tx = cl_be.from_numpy(x)
    out = cl_be.empty((4, 6))
    cl_be.copy_from_host(out, x)
    assert cl_be.stats() == {"h2d_count": 2, "h2d_bytes": 2 * x.nbytes, "d2h_count": 0, "d2h_bytes": 0}
    total = cl_be.zeros((1,))
    for _ in range(3):   # device-side work moves nothing across
        cl_be.activation_forward(out, tx, "relu")
        cl_be.sum(total, out, accumulate=True)
    assert cl_be.stats()["d2h_count"] == 0 and cl_be.stats()["h2d_count"] == 2
    view = cl_be.reshape(tx, (24,))
    assert view.shape == (24,) and view.buffer is tx.buffer
    cl_be.fill(view, 2.0)
    np.testing.assert_array_equal(cl_be.to_numpy(tx), np.full((4, 6), 2.0, np.float32))
    assert cl_be.to_numpy(total).shape == (1,)
    assert cl_be.stats()["d2h_count"] == 2 and cl_be.stats()["d2h_bytes"] == x.nbytes + 4
    cl_be.reset_stats()
    assert cl_be.stats() == {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}
    with pytest.raises(ValueError, match="reshape"):
        cl_be.reshape(tx, (5, 5))


def test_from_numpy_dtypes(cl_be):
    labels = cl_be.from_numpy(np.array([3, 1, 2]))
    assert labels.dtype == np.int32 and labels.shape == (3,)
    np.testing.assert_array_equal(cl_be.to_numpy(labels), [3, 1, 2])
    assert cl_be.from_numpy(np.ones((2, 2), np.float64)).dtype == np.float32


def test_info_reports_device_and_gemm_parameters(cl_be):
    info = cl_be.info()
    for key in ("platform", "device", "compute_units", "global_memory_bytes", "gemm"):
        assert key in info
    assert info["name"] == "opencl" and info["gemm"]["family"] in ("direct", "tiled")


# -------------------------------------------------------------------- device selection
def test_device_selection_by_index_and_name(cl_be):
    from minidl.backends.opencl.runtime import select_device
    platform, device = select_device("0:0")
    assert device.name
    assert select_device(device.name[:5])[1].name == device.name
    with pytest.raises(LookupError, match="matches no OpenCL device"):
        select_device("no-such-device-anywhere")


def test_no_platform_raises_backend_unavailable(monkeypatch):
    import pyopencl as cl
    from minidl.backends.opencl import create
    monkeypatch.setattr(cl, "get_platforms", lambda: [])
    with pytest.raises(BackendUnavailable, match="pocl-opencl-icd"):
        create()


# ----------------------------------------------------------------------------- tuner
def tuner_settings(monkeypatch, home, tune):
    """MINIDL_HOME and MINIDL_OPENCL_TUNE for this test only (minidl.settings re-read)."""
    from minidl import settings
    monkeypatch.setenv("MINIDL_HOME", str(home))
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", tune)
    monkeypatch.setattr(settings, "_current", settings.read())


TINY_CANDIDATES = [
    {"family": "direct", "RM": 2, "VW": 4, "VN": 1, "local": None},
    {"family": "tiled", "TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "VWN": 4},
]


def test_tuner_picks_the_fastest_and_caches_it(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import tuner
    tuner_settings(monkeypatch, tmp_path, "1")
    monkeypatch.setattr(tuner, "DIRECT_CANDIDATES", TINY_CANDIDATES[:1])
    monkeypatch.setattr(tuner, "TILED_CANDIDATES", TINY_CANDIDATES[1:])
    monkeypatch.setattr(tuner, "TUNE_SHAPES", ((64, 64, 64), (96, 40, 20)))
    params = tuner.gemm_params(cl_be.rt)
    table = json.loads((tmp_path / "opencl_tuning.json").read_text())
    entry = table[cl_be.rt.device_key]
    timed = [r for r in entry["results"] if r["gflops"] is not None]
    assert len(timed) == 2 and all(len(r["gflops_by_shape"]) == 2 for r in timed)
    assert params == entry["params"] == max(timed, key=lambda r: r["gflops"])["params"]
    assert tuner.last_source(cl_be.rt) == "tuned"

    def no_tuning(*args, **kwargs):
        raise AssertionError("a stored choice must not be tuned again")

    monkeypatch.setattr(tuner, "tune", no_tuning)
    assert tuner.gemm_params(cl_be.rt) == params
    assert tuner.last_source(cl_be.rt) == "cached"


def test_tuning_disabled_uses_the_default(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import gemm, tuner
    tuner_settings(monkeypatch, tmp_path, "0")
    assert tuner.gemm_params(cl_be.rt) == gemm.default_params(cl_be.rt)
    assert not (tmp_path / "opencl_tuning.json").exists()
    # disabled tuning ignores stored choices too
    stored = {"params": TINY_CANDIDATES[0], "version": tuner.TUNER_VERSION}
    tuner.save_entry(cl_be.rt.device_key, stored)
    assert tuner.gemm_params(cl_be.rt) == gemm.default_params(cl_be.rt)


def test_a_choice_stored_by_another_tuner_version_is_tuned_again(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import tuner
    tuner_settings(monkeypatch, tmp_path, "1")
    tuner.save_entry(cl_be.rt.device_key, {"params": TINY_CANDIDATES[0], "version": -1})
    fresh = {"params": TINY_CANDIDATES[1], "gflops": 1.0, "version": tuner.TUNER_VERSION}
    monkeypatch.setattr(tuner, "tune", lambda runtime: fresh)
    assert tuner.gemm_params(cl_be.rt) == TINY_CANDIDATES[1]
    assert tuner.load_cache()[cl_be.rt.device_key] == fresh


def test_tuner_skips_a_candidate_that_computes_wrong_numbers(cl_be, monkeypatch):
    from minidl.backends.opencl import tuner
    def wrong_product(self, c, *args):
        self.rt.write(c, np.zeros(c.shape, np.float32))

    monkeypatch.setattr(tuner.Gemm, "run", wrong_product)
    entry = tuner.tune(cl_be.rt, candidates=TINY_CANDIDATES, shapes=[(64, 64, 64)], repeats=1)
    assert all(r["gflops"] is None for r in entry["results"])


@pytest.mark.parametrize("trans_a", [False, True])
def test_gemm_split_along_k(cl_be, np_be, rng, trans_a):
    from minidl.backends.opencl import gemm
    m, n, k = 27, 37, 5000   # few blocks of C, a long k axis: the product is cut into k slices
    assert gemm.split_k_slices(max(1, m // 12) * max(1, n // 32), k) > 1
    a = randn(rng, *((k, m) if trans_a else (m, k)))
    run_both(cl_be, np_be, "gemm", randn(rng, m, n), a, randn(rng, k, n), 0.5, -1.0, trans_a, False,
             rtol=1e-3, atol=1e-3)
