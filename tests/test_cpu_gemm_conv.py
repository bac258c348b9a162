"""The cpu backend's GEMM and convolution kernels beyond what tests/test_ops.py compares: the
fast kernels against their plain C reference twins, threads, scratch sizes, bitwise
reproducibility, argument checks and ISA selection.

Tests that take the `isa` fixture (tests/conftest.py) run once per instruction set this CPU has.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from minidl.backends.cpu._ffi import ffi, lib  # the extension must be built: tests fail, not skip
from minidl.backends.base import make_window
from minidl.backends.cpu._ffi import CpuPlanScratch, fptr
from minidl.backends.cpu.backend import CpuBackend
from minidl.backends.numpy_backend import NumpyBackend

ops = CpuBackend()


def conv_reference(x, w, dout, plan):
    """(out, dx, dweight) from the float64 numpy backend (tests/test_numpy_backend.py checks it
    against loops)."""
    be64 = NumpyBackend("float64")
    x, w, dout = (be64.from_numpy(t) for t in (x, w, dout))
    results = [be64.empty(plan.out_shape), be64.empty(plan.in_shape), be64.empty(w.shape)]
    be64.conv2d_forward(results[0], x, w, None, plan)
    be64.conv2d_backward_data(results[1], dout, w, plan)
    be64.conv2d_backward_filter(results[2], None, dout, x, plan)
    return results


# ------------------------------------------------------------------ gemm

def test_gemm_matches_reference_twin(isa):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((50, 70), dtype=np.float32)
    b = rng.standard_normal((80, 70), dtype=np.float32)
    fast = rng.standard_normal((50, 80), dtype=np.float32)
    ref = fast.copy()
    assert lib.minidl_sgemm(fptr(fast), fptr(a), fptr(b), 2.0, 0.5, 0, 1, 50, 80, 70, 70, 70, 80) == lib.MINIDL_OK
    lib.minidl_sgemm_ref(fptr(ref), fptr(a), fptr(b), 2.0, 0.5, 0, 1, 50, 80, 70, 70, 70, 80)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)


def test_gemm_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"gemm: op\(a\)"):
        ops.gemm(np.empty((3, 4), np.float32), np.empty((3, 5), np.float32), np.empty((6, 4), np.float32))
    with pytest.raises(ValueError, match="float32"):
        ops.gemm(np.empty((3, 4), np.float32), np.empty((3, 5)), np.empty((5, 4), np.float32))


# ----------------------------------------------------------- convolution

def test_conv_fast_matches_reference_twins(isa):
    rng = np.random.default_rng(6)
    plan = ops.conv2d_plan((3, 9, 8, 5), (3, 3, 5, 6), (2, 1), "same")
    s = plan.scratch_for(CpuPlanScratch).conv
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 5, 6), dtype=np.float32)
    bias = rng.standard_normal(6, dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    fast, ref = np.empty(plan.out_shape, np.float32), np.empty(plan.out_shape, np.float32)
    assert lib.minidl_conv2d_forward(fptr(fast), fptr(x), fptr(w), fptr(bias), s.window, s.ptr, s.floats) == 0
    lib.minidl_conv2d_forward_ref(fptr(ref), fptr(x), fptr(w), fptr(bias), s.window)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)
    fast, ref = np.empty(plan.in_shape, np.float32), np.empty(plan.in_shape, np.float32)
    assert lib.minidl_conv2d_backward_data(fptr(fast), fptr(dout), fptr(w), s.window, s.ptr, s.floats) == 0
    lib.minidl_conv2d_backward_data_ref(fptr(ref), fptr(dout), fptr(w), s.window)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-4)
    fast, ref = np.empty(w.shape, np.float32), np.empty(w.shape, np.float32)
    fast_b, ref_b = np.empty(6, np.float32), np.empty(6, np.float32)
    assert lib.minidl_conv2d_backward_filter(fptr(fast), fptr(fast_b), fptr(dout), fptr(x), s.window, s.ptr,
                                             s.floats) == 0
    lib.minidl_conv2d_backward_filter_ref(fptr(ref), fptr(ref_b), fptr(dout), fptr(x), s.window)
    np.testing.assert_allclose(fast, ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(fast_b, ref_b, rtol=1e-4, atol=1e-4)


def test_conv_with_one_thread_and_with_small_scratch(isa):
    """The kernels give the same answer single-threaded, and refuse a scratch too small for one thread."""
    rng = np.random.default_rng(7)
    plan = ops.conv2d_plan((3, 8, 8, 4), (3, 3, 4, 8), (1, 1), "valid")
    x = rng.standard_normal(plan.in_shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, 4, 8), dtype=np.float32)
    dout = rng.standard_normal(plan.out_shape, dtype=np.float32)
    _, want_dx, want_dw = conv_reference(x, w, dout, plan)
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
    s = plan.scratch_for(CpuPlanScratch).conv
    out = np.empty(plan.out_shape, np.float32)
    status = lib.minidl_conv2d_forward(fptr(out), fptr(x), fptr(w), ffi.NULL, s.window, s.ptr, 10)
    assert status == lib.MINIDL_SCRATCH_TOO_SMALL


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
    want = conv_reference(x, w, np.zeros(plan.out_shape, np.float32), plan)[0]
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_conv_errors_name_the_op_and_shapes():
    plan = ops.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    with pytest.raises(ValueError, match=r"conv2d_forward: x must have shape \(2, 5, 5, 3\), got \(2, 5, 5, 4\)"):
        ops.conv2d_forward(np.empty(plan.out_shape, np.float32), np.empty((2, 5, 5, 4), np.float32),
                           np.empty((3, 3, 3, 4), np.float32), None, plan)
    with pytest.raises(ValueError, match="conv2d_plan"):
        ops.conv2d_plan((2, 5, 5, 3), (3, 3, 2, 4), (1, 1), "same")


# ------------------------------------------------------- ISA selection

@pytest.mark.skipif(lib.minidl_cpu_best_isa() >= 2, reason="this CPU runs every ISA")
def test_an_isa_the_cpu_lacks_warns_and_uses_the_best_one():
    code = "from minidl.backends.cpu._ffi import lib; print(lib.minidl_cpu_isa())"
    env = dict(os.environ, MINIDL_CPU_ISA="avx512")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(lib.minidl_cpu_best_isa())]
    assert "RuntimeWarning: MINIDL_CPU_ISA=avx512: this CPU does not support it" in result.stderr


@pytest.mark.parametrize("user_policy", [None, "active"])
def test_loading_waits_passively_and_leaves_the_environment_alone(user_policy):
    """libgomp reads OMP_WAIT_POLICY once, when the extension loads: passive then, unless the
    user chose a policy; os.environ is the user's afterwards (child processes inherit it)."""
    code = ("import os; from minidl.backends.cpu import create; create(); "
            "print(os.environ.get('OMP_WAIT_POLICY'))")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_DISPLAY_ENV"] = "true"  # libgomp prints the policy it took to stderr
    if user_policy:
        env["OMP_WAIT_POLICY"] = user_policy
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(user_policy)]
    assert f"OMP_WAIT_POLICY = '{(user_policy or 'passive').upper()}'" in result.stderr


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
