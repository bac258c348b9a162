"""The cpu backend's GEMM and convolution kernels against numpy, on every ISA path.

Each test runs once per instruction set (generic, avx2, avx512) that this CPU has:
the kernels are switched with minidl_set_isa, and one test checks that the
MINIDL_CPU_ISA environment variable selects the path at load time.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from minidl._cpu_kernels import ffi, lib  # the extension must be built: tests fail, not skip
from minidl.backends.base import make_window
from minidl.backends.cpu._ffi import fptr
from minidl.backends.cpu.linalg import LinalgOps

ISA_NAMES = {0: "generic", 1: "avx2", 2: "avx512"}
ISAS = [isa for isa in ISA_NAMES if isa <= lib.minidl_cpu_best_isa()]


@pytest.fixture(params=ISAS, ids=[ISA_NAMES[i] for i in ISAS])
def isa(request):
    before = lib.minidl_cpu_isa()
    assert lib.minidl_set_isa(request.param) == request.param
    yield request.param
    lib.minidl_set_isa(before)


ops = LinalgOps()


# ------------------------------------------------------------------ gemm

GEMM_SIZES = [(1, 1, 1), (7, 13, 5), (13, 7, 129), (129, 33, 17), (64, 64, 64), (97, 300, 258),
              (2, 517, 3), (300, 1, 1000)]


@pytest.mark.parametrize("m,n,k", GEMM_SIZES)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (0.7, -1.3)])  # alpha 1 reads A in place, else packs it
def test_gemm_matches_numpy(isa, m, n, k, trans_a, trans_b, alpha, beta):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a = rng.standard_normal((k, m) if trans_a else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    out = rng.standard_normal((m, n), dtype=np.float32)
    expected = alpha * ((a.T if trans_a else a).astype(np.float64) @ (b.T if trans_b else b)) + beta * out
    ops.gemm(out, a, b, alpha, beta, trans_a, trans_b)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.sqrt(k))


def test_gemm_beta_zero_ignores_nan_in_out(isa):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((37, 21), dtype=np.float32)
    b = rng.standard_normal((21, 45), dtype=np.float32)
    out = np.full((37, 45), np.nan, dtype=np.float32)
    ops.gemm(out, a, b)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_gemm_k_zero_scales_out(isa):
    out = np.ones((5, 6), dtype=np.float32)
    ops.gemm(out, np.empty((5, 0), np.float32), np.empty((0, 6), np.float32), 1.0, 0.5)
    np.testing.assert_array_equal(out, 0.5)


def test_gemm_matches_reference_twin(isa):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((50, 70), dtype=np.float32)
    b = rng.standard_normal((80, 70), dtype=np.float32)
    fast = rng.standard_normal((50, 80), dtype=np.float32)
    ref = fast.copy()
    lib.sgemm(fptr(fast), fptr(a), fptr(b), 50, 80, 70, 0, 1, 2.0, 0.5, 70, 70, 80)
    lib.sgemm_ref(fptr(ref), fptr(a), fptr(b), 50, 80, 70, 0, 1, 2.0, 0.5, 70, 70, 80)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)


def test_gemm_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"gemm: op\(a\)"):
        ops.gemm(np.empty((3, 4), np.float32), np.empty((3, 5), np.float32), np.empty((6, 4), np.float32))
    with pytest.raises(ValueError, match="float32"):
        ops.gemm(np.empty((3, 4), np.float32), np.empty((3, 5)), np.empty((5, 4), np.float32))


# ----------------------------------------------------------- convolution

def conv_forward_numpy(x, w, bias, plan):
    """The definition: zero-pad x, then sum shifted slices times the kernel taps."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (plan.pad_top, plan.pad_bottom),
                                       (plan.pad_left, plan.pad_right), (0, 0)))
    out = np.zeros(plan.out_shape)
    for ky in range(plan.kh):
        for kx in range(plan.kw):
            patch = xp[:, ky:ky + plan.sh * (plan.oh - 1) + 1:plan.sh, kx:kx + plan.sw * (plan.ow - 1) + 1:plan.sw]
            out += patch @ w[ky, kx]
    return out + (0 if bias is None else bias)


def conv_backward_numpy(dout, x, w, plan):
    """(dx, dweight, dbias) as the adjoints of conv_forward_numpy."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (plan.pad_top, plan.pad_bottom),
                                       (plan.pad_left, plan.pad_right), (0, 0)))
    dxp = np.zeros_like(xp)
    dw = np.zeros(w.shape)
    d = dout.astype(np.float64)
    for ky in range(plan.kh):
        for kx in range(plan.kw):
            ys = slice(ky, ky + plan.sh * (plan.oh - 1) + 1, plan.sh)
            xs = slice(kx, kx + plan.sw * (plan.ow - 1) + 1, plan.sw)
            dw[ky, kx] = np.einsum("nhwc,nhwf->cf", xp[:, ys, xs], d)
            dxp[:, ys, xs] += d @ w[ky, kx].T
    dx = dxp[:, plan.pad_top:plan.pad_top + plan.h, plan.pad_left:plan.pad_left + plan.w]
    return dx, dw, d.sum(axis=(0, 1, 2))


# (N, H, W, C), (KH, KW), F, strides, padding. With two or more images and stride 1 the
# kernels run the implicit (no im2col) path, except where channels or areas make im2col
# cheaper; the last three cases take the implicit path for all three ops (one cuts each
# 3 x 96-float run into pieces of at most KC floats).
CONV_CASES = [
    ((1, 7, 9, 3), (3, 3), 5, (1, 1), "same"),
    ((2, 8, 8, 4), (3, 3), 8, (1, 1), "valid"),
    ((3, 11, 6, 2), (5, 5), 3, (2, 2), "same"),
    ((2, 13, 13, 5), (5, 5), 7, (3, 3), "valid"),
    ((1, 9, 10, 6), (1, 1), 4, (1, 1), "same"),
    ((4, 5, 5, 16), (1, 1), 33, (1, 1), "valid"),
    ((2, 9, 7, 3), (1, 1), 6, (2, 3), "valid"),
    ((3, 10, 12, 4), (3, 1), 5, (2, 1), "same"),
    ((1, 6, 5, 2), (3, 5), 3, (3, 2), "same"),
    ((5, 17, 17, 32), (3, 3), 32, (1, 1), "same"),
    ((1, 4, 4, 1), (5, 5), 1, (1, 1), "same"),
    ((2, 30, 30, 32), (3, 3), 8, (1, 1), "valid"),
    ((2, 16, 16, 32), (5, 5), 16, (1, 1), "same"),
    ((2, 9, 9, 96), (3, 3), 40, (1, 1), "same"),
]


@pytest.mark.parametrize("in_shape,kernel,filters,strides,padding", CONV_CASES)
def test_conv_matches_numpy(isa, in_shape, kernel, filters, strides, padding):
    rng = np.random.default_rng(sum(in_shape) * 31 + filters)
    plan = ops.conv2d_plan(in_shape, kernel + (in_shape[3], filters), strides, padding)
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((plan.kh, plan.kw, plan.c, plan.oc), dtype=np.float32)
    bias = rng.standard_normal(plan.oc, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    tol = dict(rtol=1e-4, atol=2e-4 * np.sqrt(plan.kh * plan.kw * max(plan.c, plan.oc)))

    out = np.full(plan.out_shape, np.nan, dtype=np.float32)
    dx = np.full(plan.in_shape, np.nan, dtype=np.float32)
    dw = np.full(w.shape, np.nan, dtype=np.float32)
    db = np.full(plan.oc, np.nan, dtype=np.float32)
    for _ in range(2):  # the second call checks that nothing accumulates into stale outputs
        ops.conv2d_forward(out, x, w, bias, plan)
        ops.conv2d_backward_data(dx, dout, w, plan)
        ops.conv2d_backward_filter(dw, db, dout, x, plan)

    want_dx, want_dw, want_db = conv_backward_numpy(dout, x, w, plan)
    np.testing.assert_allclose(out, conv_forward_numpy(x, w, bias, plan), **tol)
    np.testing.assert_allclose(dx, want_dx, **tol)
    np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=tol["atol"] * np.sqrt(plan.n * plan.oh * plan.ow))
    np.testing.assert_allclose(db, want_db, rtol=1e-4, atol=1e-3 * np.sqrt(plan.n * plan.oh * plan.ow))


def test_conv_without_bias(isa):
    rng = np.random.default_rng(5)
    plan = ops.conv2d_plan((2, 6, 6, 3), (3, 3, 3, 4), (1, 1), "same")
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 3, 4), dtype=np.float32)
    out = np.empty(plan.out_shape, np.float32)
    ops.conv2d_forward(out, x, w, None, plan)
    np.testing.assert_allclose(out, conv_forward_numpy(x, w, None, plan), rtol=1e-4, atol=1e-4)
    dw = np.empty_like(w)
    ops.conv2d_backward_filter(dw, None, np.ones(plan.out_shape, np.float32), x, plan)
    np.testing.assert_allclose(dw, conv_backward_numpy(np.ones(plan.out_shape), x, w, plan)[1], rtol=1e-4, atol=1e-3)


def test_conv_fast_matches_reference_twins_with_fused_relu(isa):
    rng = np.random.default_rng(6)
    plan = ops.conv2d_plan((3, 9, 8, 5), (3, 3, 5, 6), (2, 1), "same")
    s = plan.scratch["cpu_conv"]
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 5, 6), dtype=np.float32)
    bias = rng.standard_normal(6, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    fast, ref = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.float32)
    assert lib.conv2d_forward(fptr(fast), fptr(x), fptr(w), fptr(bias), s.shape, s.ptr, s.floats, 1) == 0
    lib.conv2d_forward_ref(fptr(ref), fptr(x), fptr(w), fptr(bias), s.shape, 1)
    assert (fast >= 0).all() and (fast == 0).any()
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)
    fast, ref = np.empty(plan.in_shape, np.float32), np.empty(plan.in_shape, np.float32)
    assert lib.conv2d_backward_data(fptr(fast), fptr(dout), fptr(w), s.shape, s.ptr, s.floats) == 0
    lib.conv2d_backward_data_ref(fptr(ref), fptr(dout), fptr(w), s.shape)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)
    fast, ref = np.empty(w.shape, np.float32), np.empty(w.shape, np.float32)
    fast_b, ref_b = np.empty(6, np.float32), np.empty(6, np.float32)
    assert lib.conv2d_backward_filter(fptr(fast), fptr(fast_b), fptr(dout), fptr(x), s.shape, s.ptr, s.floats) == 0
    lib.conv2d_backward_filter_ref(fptr(ref), fptr(ref_b), fptr(dout), fptr(x), s.shape)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(fast_b, ref_b, rtol=1e-4, atol=1e-4)


def test_conv_with_one_thread_and_with_small_scratch(isa):
    """The kernels give the same answer single-threaded, and refuse a scratch too small for one thread."""
    rng = np.random.default_rng(7)
    plan = ops.conv2d_plan((3, 8, 8, 4), (3, 3, 4, 8), (1, 1), "valid")
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 4, 8), dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    want_dx, want_dw, _ = conv_backward_numpy(dout, x, w, plan)
    threads = lib.minidl_num_threads()
    try:
        lib.minidl_set_num_threads(1)
        dx, dw = np.empty(plan.in_shape, np.float32), np.empty(w.shape, np.float32)
        ops.conv2d_backward_data(dx, dout, w, plan)
        ops.conv2d_backward_filter(dw, None, dout, x, plan)
    finally:
        lib.minidl_set_num_threads(threads)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=1e-3)
    s = plan.scratch["cpu_conv"]
    out = np.empty(plan.out_shape, np.float32)
    assert lib.conv2d_forward(fptr(out), fptr(x), fptr(w), ffi.NULL, s.shape, s.ptr, 10, 0) == -1


def test_conv_results_are_bitwise_reproducible():
    """Same inputs, same bits: threads never change the order of a sum (Keras users rely on set_seed)."""
    rng = np.random.default_rng(9)
    plan = ops.conv2d_plan((6, 12, 12, 16), (3, 3, 16, 32), (1, 1), "same")
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 16, 32), dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    runs = []
    for _ in range(4):
        out, dx = np.empty(plan.out_shape, np.float32), np.empty(plan.in_shape, np.float32)
        dw, db = np.empty(w.shape, np.float32), np.empty(32, np.float32)
        ops.conv2d_forward(out, x, w, None, plan)
        ops.conv2d_backward_data(dx, dout, w, plan)
        ops.conv2d_backward_filter(dw, db, dout, x, plan)
        runs.append((out, dx, dw, db))
    for run in runs[1:]:
        for got, first in zip(run, runs[0]):
            np.testing.assert_array_equal(got, first)


def test_conv_accepts_a_plan_from_the_base_class():
    plan = make_window((2, 5, 5, 3), (3, 3), (1, 1), "same", out_channels=4)
    x = np.ones(plan.in_shape, np.float32)
    w = np.ones((3, 3, 3, 4), np.float32)
    out = np.empty(plan.out_shape, np.float32)
    ops.conv2d_forward(out, x, w, None, plan)
    np.testing.assert_allclose(out, conv_forward_numpy(x, w, None, plan), rtol=1e-5)


def test_conv_errors_name_the_op_and_shapes():
    plan = ops.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    with pytest.raises(ValueError, match=r"conv2d_forward: x must have shape \(2, 5, 5, 3\), got \(2, 5, 5, 4\)"):
        ops.conv2d_forward(np.empty(plan.out_shape, np.float32), np.empty((2, 5, 5, 4), np.float32),
                           np.empty((3, 3, 3, 4), np.float32), None, plan)
    with pytest.raises(ValueError, match="conv2d_plan"):
        ops.conv2d_plan((2, 5, 5, 3), (3, 3, 2, 4), (1, 1), "same")


def test_conv_matches_numpy_backend(isa):
    numpy_backend = pytest.importorskip("minidl.backends.numpy_backend")
    ref = numpy_backend.create()
    rng = np.random.default_rng(8)
    for in_shape, kernel, filters, strides, padding in CONV_CASES[:4]:
        plan = ops.conv2d_plan(in_shape, kernel + (in_shape[3], filters), strides, padding)
        ref_plan = ref.conv2d_plan(in_shape, kernel + (in_shape[3], filters), strides, padding)
        x = rng.standard_normal(plan.in_shape, dtype=np.float32)
        w = rng.standard_normal((plan.kh, plan.kw, plan.c, plan.oc), dtype=np.float32)
        dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
        got = [np.empty(plan.out_shape, np.float32), np.empty(plan.in_shape, np.float32), np.empty_like(w)]
        ops.conv2d_forward(got[0], x, w, None, plan)
        ops.conv2d_backward_data(got[1], dout, w, plan)
        ops.conv2d_backward_filter(got[2], None, dout, x, plan)
        want = [ref.zeros(plan.out_shape), ref.zeros(plan.in_shape), ref.zeros(w.shape)]
        rx, rw, rd = ref.from_numpy(x), ref.from_numpy(w), ref.from_numpy(dout)
        ref.conv2d_forward(want[0], rx, rw, None, ref_plan)
        ref.conv2d_backward_data(want[1], rd, rw, ref_plan)
        ref.conv2d_backward_filter(want[2], None, rd, rx, ref_plan)
        for g, wnt in zip(got, want):
            np.testing.assert_allclose(g, ref.to_numpy(wnt), rtol=1e-3, atol=2e-3)


# ------------------------------------------------------- ISA selection

def test_isa_env_var_selects_path_at_load():
    code = ("from minidl._cpu_kernels import ffi, lib; "
            "print(lib.minidl_cpu_isa(), ffi.string(lib.minidl_cpu_isa_name()).decode(), lib.minidl_num_threads())")
    for isa in ISAS:
        env = dict(os.environ, MINIDL_CPU_ISA=ISA_NAMES[isa], MINIDL_NUM_THREADS="3")
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == [str(isa), ISA_NAMES[isa], "3"]


def test_set_isa_lowers_unsupported_requests():
    best = lib.minidl_cpu_best_isa()
    before = lib.minidl_cpu_isa()
    try:
        assert lib.minidl_set_isa(5) == best
        assert lib.minidl_set_isa(-1) == 0
    finally:
        lib.minidl_set_isa(before)


def test_peak_gflops_is_positive():
    assert lib.minidl_peak_gflops(20, lib.minidl_cpu_best_isa()) > 0.1
