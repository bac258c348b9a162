"""The cpu backend's own behaviour: ISA-specific accuracy, the dropout generator's layout,
threads, argument checks and ISA selection. The ops themselves are compared with the numpy
reference on every ISA path in tests/test_ops.py.

Tests that take the `isa` fixture (tests/conftest.py) run once per instruction set this CPU has
(generic, avx2, avx512), switched in-process; one test checks that MINIDL_CPU_ISA selects the
path at load time in a fresh process.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from minidl._cpu_kernels import ffi, lib  # the extension must be built: tests fail, not skip
from minidl.backends.cpu import create
from minidl.backends.numpy_backend import NumpyBackend

cpu = create()


def randn(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ activations

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


# ------------------------------------------------------------------ layout and normalization

def test_pad2d_rejects_negative_pads():
    x = np.zeros((1, 2, 2, 1), np.float32)
    with pytest.raises(ValueError, match="pad2d_forward: pads must be 4 non-negative ints"):
        cpu.pad2d_forward(x, x, (0, 0, -1, 1))


def test_concat_rejects_widths_that_do_not_add_up():
    xs = [np.zeros((3, 4, w), np.float32) for w in (1, 7, 16)]
    with pytest.raises(ValueError, match="concat_forward: last axes of xs add up to 24, out has 25"):
        cpu.concat_forward(np.empty((3, 4, 25), np.float32), xs)


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (2, 5, 5, 17), (64, 100)])
def test_batchnorm_without_scale_and_center(isa, shape):
    """gamma and beta None (scale and center off): a cpu and numpy extension of the contract."""
    rng = np.random.default_rng(sum(shape))
    c = shape[-1]
    x, dout = randn(rng, shape, scale=3.0) + 2.0, randn(rng, shape)
    results = []
    for backend in (cpu, NumpyBackend()):
        out, mean, invstd = np.empty_like(x), np.empty(c, np.float32), np.empty(c, np.float32)
        moving_mean, moving_var = np.full(c, 0.5, np.float32), np.full(c, 2.0, np.float32)
        backend.batchnorm_forward_train(out, mean, invstd, x, None, None, moving_mean, moving_var,
                                        0.9, 1e-3)
        infer, dx = np.empty_like(x), np.empty_like(x)
        backend.batchnorm_forward_infer(infer, x, None, None, moving_mean, moving_var, 1e-3)
        backend.batchnorm_backward(dx, None, None, dout, x, mean, invstd, None)
        results.append([out, mean, invstd, moving_mean, moving_var, infer, dx])
    for got, expected in zip(*results):
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4)


# ------------------------------------------------------------------ dropout

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
    for isa in range(lib.minidl_cpu_best_isa() + 1):
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


# ------------------------------------------------------------------ losses and optimizers

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
    assert info["isa"] == ffi.string(lib.minidl_cpu_isa_name()).decode()
    assert info["threads"] == lib.minidl_num_threads() >= 1


def test_environment_selects_the_isa_and_threads_in_a_fresh_process(isa):
    code = ("import numpy as np; from minidl.backends.cpu import create; b = create(); "
            "x = np.linspace(-3, 3, 101, dtype=np.float32); o = np.empty_like(x); "
            "b.activation_forward(o, x, 'tanh'); "
            "print(b.info()['isa'], b.info()['threads'], float(np.abs(o - np.tanh(x)).max()))")
    env = dict(os.environ, MINIDL_CPU_ISA=isa, MINIDL_NUM_THREADS="3")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    name, threads, error = result.stdout.split()
    assert (name, threads) == (isa, "3")
    assert float(error) < 1e-6


# ------------------------------------------------------------------ broadcasting loops

# shape pairs whose axes the C loops merge in different ways: same shapes (one axis), a scalar,
# a channel bias, length-1 axes, an outer product, and sizes past the threading threshold whose
# thread ranges start and end inside a row
BROADCAST_CASES = [((128, 32, 32, 3), (128, 32, 32, 3)), ((128, 32, 32, 3), ()),
                   ((64, 8, 8, 3), (3,)), ((4, 1, 5, 1, 6), (1, 7, 5, 1, 1)),
                   ((3, 1), (1, 5)), ((1, 1, 1), (1,)), ((3, 40000, 1), (1, 1, 7)),
                   ((2, 3, 70001), (2, 1, 70001)), ((70001,), (1,))]


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_CASES)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum",
                                "less", "logical_or"])
def test_binary_broadcasting_matches_numpy(shape_a, shape_b, op):
    rng = np.random.default_rng(1)
    a, b = randn(rng, shape_a), randn(rng, shape_b)
    if op in ("maximum", "minimum") and a.size > 1:
        a.flat[::97] = np.nan   # NaN wins in either position, as numpy's
        b.flat[::13] = np.nan
    out_shape = np.broadcast_shapes(shape_a, shape_b)
    for first, second in ((a, b), (b, a)):
        out = cpu.empty(out_shape)
        cpu.binary(out, cpu.from_numpy(first), cpu.from_numpy(second), op)
        expected = getattr(np, op if op != "logical_or" else "logical_or")(first, second)
        np.testing.assert_array_equal(cpu.to_numpy(out), expected.astype(np.float32))


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_CASES)
def test_binary_with_a_python_float_and_where_match_numpy(shape_a, shape_b):
    rng = np.random.default_rng(2)
    a, b = randn(rng, shape_a), randn(rng, shape_b)
    out_shape = np.broadcast_shapes(shape_a, shape_b)
    out = cpu.empty(shape_a)
    cpu.binary(out, cpu.from_numpy(a), 0.25, "maximum")
    np.testing.assert_array_equal(cpu.to_numpy(out), np.maximum(a, np.float32(0.25)))
    condition = (randn(rng, shape_b) > 0).astype(np.float32)
    out = cpu.empty(out_shape)
    cpu.where(out, cpu.from_numpy(condition), cpu.from_numpy(a), cpu.from_numpy(b))
    np.testing.assert_array_equal(cpu.to_numpy(out), np.where(condition != 0, a, b))
