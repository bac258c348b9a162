"""Every SGEMM micro-kernel entry of csrc/gemm.c's table this CPU can run (the AVX-512 Intel
entry included wherever AVX-512 runs, whatever the vendor), forced with
minidl_sgemm_select_kernel, against the plain reference twin minidl_sgemm_ref on sizes that cut
the register tiles and the mc / kc / nc cache blocks raggedly, in every transpose, and through
a convolution; and the default each CPU gets."""

import numpy as np
import pytest

from minidl.backends.cpu._ffi import ffi, fptr, lib  # the extension must be built: tests fail, not skip
from test_cpu_gemm_conv import conv_reference, ops

KERNELS = [ffi.string(lib.minidl_sgemm_kernel_names(i)).decode() for i in range(lib.minidl_sgemm_kernel_count())]
ISA_OF = {"generic": 0, "avx2": 1, "avx512": 2}


@pytest.fixture(params=KERNELS)
def kernel(request):
    before = lib.minidl_cpu_isa()
    lib.minidl_set_isa(ISA_OF[request.param.split()[0]])
    assert lib.minidl_sgemm_select_kernel(request.param.encode()) == 1
    try:
        assert ffi.string(lib.minidl_sgemm_kernel_name()).decode() == request.param
        yield request.param
    finally:
        lib.minidl_sgemm_select_kernel(b"")
        lib.minidl_set_isa(before)


# m, n, k: one element; under one tile; across tiles, kc (256) and mc (240/280) raggedly; over
# nc 1024 (the Intel entry's B block) with a ragged rest
SIZES = [(1, 1, 1), (5, 7, 3), (13, 33, 257), (241, 70, 513), (30, 1061, 40)]


@pytest.mark.parametrize("m,n,k", SIZES)
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_each_kernel_matches_the_reference_twin(kernel, m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(m * 31 + n * 7 + k + 2 * trans_a + trans_b)
    a = rng.standard_normal((k, m) if trans_a else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    fast = rng.standard_normal((m, n), dtype=np.float32)
    ref = fast.copy()
    lda, ldb = a.shape[1], b.shape[1]
    for alpha, beta in ((1.0, 0.0), (2.0, 0.5)):
        assert lib.minidl_sgemm(fptr(fast), fptr(a), fptr(b), alpha, beta, trans_a, trans_b, m, n, k,
                                lda, ldb, n) == lib.MINIDL_OK
        lib.minidl_sgemm_ref(fptr(ref), fptr(a), fptr(b), alpha, beta, trans_a, trans_b, m, n, k, lda, ldb, n)
        np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=2e-4 * np.sqrt(k))


def test_each_kernel_runs_the_convolutions(kernel):
    rng = np.random.default_rng(4)
    plan = ops.conv2d_plan((3, 11, 10, 7), (3, 3, 7, 37), (1, 1), "same")
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 7, 37), dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    out, dx, dw = np.empty(plan.out_shape, np.float32), np.empty(plan.in_shape, np.float32), np.empty_like(w)
    ops.conv2d_forward(out, x, w, None, plan)
    ops.conv2d_backward_data(dx, dout, w, plan)
    ops.conv2d_backward_filter(dw, None, dout, x, plan)
    for got, want in zip((out, dx, dw), conv_reference(x, w, dout, plan)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def _vendor():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def test_the_default_follows_the_isa_and_the_vendor():
    name = ffi.string(lib.minidl_sgemm_kernel_name()).decode()
    assert name in KERNELS
    assert name.split()[0] == ffi.string(lib.minidl_cpu_isa_name()).decode()
    vendor = _vendor()
    if lib.minidl_cpu_isa() == 2 and vendor is not None:
        assert name.endswith("intel") == (vendor == "GenuineIntel")


def test_selecting_an_unknown_kernel_keeps_the_default():
    default = ffi.string(lib.minidl_sgemm_kernel_name()).decode()
    try:
        assert lib.minidl_sgemm_select_kernel(b"avx1024 99x99") == 0
        assert ffi.string(lib.minidl_sgemm_kernel_name()).decode() == default
    finally:
        lib.minidl_sgemm_select_kernel(b"")


def test_a_kernel_of_a_higher_isa_waits_for_it():
    """A forced kernel runs only while the ISA in use can run it."""
    if lib.minidl_cpu_best_isa() < 1:
        pytest.skip("only the generic kernel runs here")
    before = lib.minidl_cpu_isa()
    try:
        assert lib.minidl_sgemm_select_kernel(KERNELS[-1].encode()) == 1
        lib.minidl_set_isa(0)
        assert ffi.string(lib.minidl_sgemm_kernel_name()).decode() == "generic 4x8"
    finally:
        lib.minidl_sgemm_select_kernel(b"")
        lib.minidl_set_isa(before)


def test_info_names_the_sgemm_kernel():
    from minidl.backends.cpu import create
    assert create().info()["gemm_kernel"] == ffi.string(lib.minidl_sgemm_kernel_name()).decode()
