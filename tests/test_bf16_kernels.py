"""The bf16 GEMM and convolution kernels (csrc/gemm_bf16*.c, csrc/conv_bf16.c) against their
reference twins (operands rounded to bfloat16, then plain float32 loops), on each path this CPU
has: the AMX tiles where the CPU, the OS and Linux's permission allow them (skipped elsewhere),
and the fallback (rounded copies + the float32 kernels) on every ISA path, which AVX2-only and
AVX-512-without-AMX machines run."""

import numpy as np
import pytest

from minidl.backends.cpu._ffi import CpuPlanScratch, ffi, fptr, lib
from minidl.backends.cpu.backend import CpuBackend

ops = CpuBackend()
AMX = bool(lib.minidl_amx_available()) and bool(lib.minidl_cpu_has_avx512_bf16())


@pytest.fixture(params=["amx", "rounded"])
def bf16_path(request, isa):
    """Each test runs on the AMX path (avx512 ISA, AMX present) and on the fallback of every ISA."""
    if request.param == "amx" and not AMX:
        pytest.skip(f"no AMX here ({ffi.string(lib.minidl_amx_status()).decode()})")
    if request.param == "amx" and isa != "avx512":
        pytest.skip("AMX runs only with the avx512 ISA path")
    was = lib.minidl_amx_active()
    lib.minidl_set_amx(1 if request.param == "amx" else 0)
    try:
        name = ffi.string(lib.minidl_bf16_kernel_name()).decode()
        assert name.startswith(request.param), name
        yield request.param
    finally:
        lib.minidl_set_amx(1 if was else 0)


def bf16(t):
    """t rounded to bfloat16, round to nearest even (the rounding every path applies)."""
    t = np.ascontiguousarray(t, dtype=np.float32)
    out = np.empty(t.shape, np.float32)
    lib.minidl_round_bfloat16(fptr(out), fptr(t), t.size)
    return out


def scale(a, b):
    """The size of the sums behind each entry: sum_k |a||b| (bounds the reordering error)."""
    return np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))


GEMM_SHAPES = [(1, 1, 1, 0, 0), (37, 45, 70, 0, 0), (64, 64, 64, 1, 0), (100, 33, 513, 0, 1),
               (129, 600, 1100, 1, 1), (5, 300, 40, 0, 0), (70, 8, 0, 0, 0)]


@pytest.mark.parametrize("m,n,k,trans_a,trans_b", GEMM_SHAPES)
def test_gemm_bf16_matches_reference_twin(bf16_path, m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((k, m) if trans_a else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    fast = rng.standard_normal((m, n), dtype=np.float32)
    ref, before = fast.copy(), fast.copy()
    args = (1.5, 0.5, trans_a, trans_b, m, n, k, max(a.shape[1], 1), max(b.shape[1], 1), n)
    assert lib.minidl_gemm_bf16(fptr(fast), fptr(a), fptr(b), *args) == lib.MINIDL_OK
    assert lib.minidl_gemm_bf16_ref(fptr(ref), fptr(a), fptr(b), *args) == lib.MINIDL_OK
    op_a, op_b = (a.T if trans_a else a), (b.T if trans_b else b)
    tolerance = 1e-5 * (1.5 * scale(op_a, op_b) + 1)
    assert np.all(np.abs(fast - ref) <= tolerance)
    # the operands were rounded: the float32 product lies much further from the reference
    if k >= 64:
        unrounded = 1.5 * (op_a.astype(np.float64) @ op_b) + 0.5 * before
        assert np.abs(unrounded - ref).max() > 20 * np.abs(fast - ref).max()


def test_gemm_bf16_beta_zero_never_reads_c(bf16_path):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((40, 50), dtype=np.float32), rng.standard_normal((50, 30), dtype=np.float32)
    c = np.full((40, 30), np.nan, np.float32)
    assert lib.minidl_gemm_bf16(fptr(c), fptr(a), fptr(b), 1.0, 0.0, 0, 0, 40, 30, 50, 50, 30, 30) == 0
    np.testing.assert_allclose(c, bf16(a).astype(np.float64) @ bf16(b), rtol=1e-5, atol=1e-4)


CONV_CASES = [  # input (N, H, W, C), kernel (KH, KW, C, F), strides, padding, dilation
    ((3, 9, 8, 5), (3, 3, 5, 6), (2, 1), "same", (1, 1)),
    ((4, 12, 12, 32), (3, 3, 32, 64), (1, 1), "valid", (1, 1)),
    ((2, 7, 9, 3), (5, 3, 3, 33), (1, 2), "same", (1, 1)),
    ((3, 10, 10, 16), (3, 3, 16, 8), (1, 1), "valid", (2, 2)),
    ((5, 6, 6, 40), (1, 1, 40, 20), (1, 1), "valid", (1, 1)),
    # the implicit (no im2col) forward: row dilation, ragged channels and filters, two pixel blocks
    ((2, 9, 40, 24), (3, 2, 24, 40), (1, 1), "same", (2, 1)),
    ((3, 10, 9, 3), (3, 3, 3, 20), (1, 1), "same", (1, 1)),   # 3 channels: a first layer's
]


@pytest.mark.parametrize("in_shape,kernel_shape,strides,padding,dilation", CONV_CASES)
def test_conv_bf16_matches_reference_twins(bf16_path, in_shape, kernel_shape, strides, padding, dilation):
    rng = np.random.default_rng(sum(in_shape))
    plan = ops.conv2d_plan(in_shape, kernel_shape, strides, padding, dilation)
    s = plan.scratch_for(CpuPlanScratch).conv
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal(kernel_shape, dtype=np.float32)
    f = kernel_shape[3]
    bias = rng.standard_normal(f, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    k = kernel_shape[0] * kernel_shape[1] * kernel_shape[2]
    atol = 1e-5 * 4 * k   # |x|, |w| ~ 1-4: sums of k products, reordered
    fast, ref = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.float32)
    assert lib.minidl_conv2d_forward_bf16(fptr(fast), fptr(x), fptr(w), fptr(bias), s.window, s.ptr, s.floats) == 0
    assert lib.minidl_conv2d_forward_bf16_ref(fptr(ref), fptr(x), fptr(w), fptr(bias), s.window) == 0
    np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=atol)
    fast, ref = np.empty(plan.in_shape, np.float32), np.empty(plan.in_shape, np.float32)
    assert lib.minidl_conv2d_backward_data_bf16(fptr(fast), fptr(dout), fptr(w), s.window, s.ptr, s.floats) == 0
    assert lib.minidl_conv2d_backward_data_bf16_ref(fptr(ref), fptr(dout), fptr(w), s.window) == 0
    np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=1e-5 * 4 * k * f)
    fast, ref = np.empty(w.shape, np.float32), np.empty(w.shape, np.float32)
    fast_b, ref_b = np.empty(f, np.float32), np.empty(f, np.float32)
    assert lib.minidl_conv2d_backward_filter_bf16(fptr(fast), fptr(fast_b), fptr(dout), fptr(x), s.window,
                                                  s.ptr, s.floats) == 0
    assert lib.minidl_conv2d_backward_filter_bf16_ref(fptr(ref), fptr(ref_b), fptr(dout), fptr(x), s.window) == 0
    pixels = dout.size // f
    np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=1e-5 * 4 * pixels)
    np.testing.assert_allclose(fast_b, ref_b, rtol=1e-5, atol=1e-5 * pixels)
    np.testing.assert_allclose(fast_b, dout.reshape(-1, f).sum(0), rtol=1e-4, atol=1e-3)   # float32 dout


def test_bf16_kernels_use_one_thread_and_many(bf16_path):
    rng = np.random.default_rng(3)
    plan = ops.conv2d_plan((5, 8, 8, 16), (3, 3, 16, 24), (1, 1), "same")
    s = plan.scratch_for(CpuPlanScratch).conv
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    results = []
    before = lib.minidl_num_threads()
    try:
        for threads in (1, 3):
            lib.minidl_set_num_threads(threads)
            dw = np.empty((3, 3, 16, 24), np.float32)
            assert lib.minidl_conv2d_backward_filter_bf16(fptr(dw), ffi.NULL, fptr(dout), fptr(x), s.window,
                                                          s.ptr, s.floats) == 0
            results.append(dw)
    finally:
        lib.minidl_set_num_threads(before)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-3)
