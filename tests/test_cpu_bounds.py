"""Every public entry point that reaches the C kernels checks sizes, ranges, dtypes, layout and
writability in Python first, and a kernel that cannot allocate raises MemoryError naming the op.

The C kernels trust their arguments: an unchecked length or index is a heap overflow, and a
read-only output would be written through. These tests give each entry point such arguments
and check for a clear error (or, for max-pool argmax, for numpy's behaviour) with the memory
around the arrays untouched.
"""

import subprocess
import sys

import numpy as np
import pytest

from minidl.backends.base import make_window
from minidl.backends.cpu import create
from minidl.backends.cpu._ffi import lib
from minidl.backends.numpy_backend import NumpyBackend
from minidl.data import augment_batch

cpu = create()


def images(n=4, size=6, channels=3, dtype=np.uint8):
    return (np.arange(n * size * size * channels) % 251).astype(dtype).reshape(n, size, size, channels)


def batch_args(batch=2, channels=3):
    """Valid (rows, crop_y, crop_x, flip, scale, shift) for images(), pad 1, 6x6 crops."""
    return (np.arange(batch) % 4, np.zeros(batch, np.int32), np.full(batch, 2, np.int32),
            np.ones(batch, np.uint8), np.ones(channels, np.float32), np.zeros(channels, np.float32))


def guarded(shape, guard=64):
    """A float32 array of `shape` inside a buffer with NaN guard zones before and after it."""
    buffer = np.full(int(np.prod(shape)) + 2 * guard, np.nan, np.float32)
    return buffer, buffer[guard:-guard].reshape(shape)


def assert_guards_intact(buffer, guard=64):
    assert np.isnan(buffer[:guard]).all() and np.isnan(buffer[-guard:]).all()


# ------------------------------------------------------------------ augment_batch

@pytest.mark.parametrize("kernel", ["c", "numpy"])
@pytest.mark.parametrize("name,value,message", [
    ("rows", np.arange(3), r"rows must have shape \(2,\)"),     # more rows than out
    ("rows", np.array([0, 4]), r"rows must lie in \[0, 3\]"),
    ("rows", np.array([-1, 0]), r"rows must lie in \[0, 3\]"),
    ("rows", np.array([0.0, 1.0]), "rows must hold integers"),
    ("crop_y", np.array([0, 3], np.int32), r"crop_y must lie in \[0, 2\]"),
    ("crop_x", np.array([-1, 0], np.int32), r"crop_x must lie in \[0, 2\]"),
    ("crop_x", np.zeros(1, np.int32), r"crop_x must have shape \(2,\)"),
    ("flip", np.zeros(5, np.uint8), r"flip must have shape \(2,\)"),
    ("scale", np.ones(2, np.float32), r"scale must have shape \(3,\)"),
    ("shift", np.zeros(4, np.float32), r"shift must have shape \(3,\)"),
    ("pad", -1, "pad must be an int >= 0"),
    ("out", np.zeros((2, 9, 6, 3), np.float32), "larger than the padded images"),
    ("out", np.zeros((2, 6, 6, 1), np.float32), "the same channels"),
    ("out", np.zeros((2, 6, 6, 3), np.float64), "out must be float32"),
], ids=["rows_longer_than_out", "row_past_end", "negative_row", "float_rows", "crop_y_too_big",
        "negative_crop_x", "short_crop_x", "long_flip", "short_scale", "long_shift", "negative_pad",
        "out_larger_than_padded", "channels_differ", "float64_out"])
def test_augment_batch_checks_sizes_and_ranges(kernel, name, value, message):
    rows, crop_y, crop_x, flip, scale, shift = batch_args()
    buffer, out = guarded((2, 6, 6, 3))
    args = dict(out=out, x=images(), rows=rows, crop_y=crop_y, crop_x=crop_x, flip=flip, scale=scale,
                shift=shift, pad=1)
    args[name] = value
    with pytest.raises(ValueError, match="augment_batch: .*" + message):
        augment_batch(**args, kernel=kernel)
    assert_guards_intact(buffer)


def test_augment_batch_still_builds_valid_batches():
    rows, crop_y, crop_x, flip, scale, shift = batch_args()
    x = images()
    got = augment_batch(np.empty((2, 6, 6, 3), np.float32), x, rows, crop_y, crop_x, flip, scale, shift, 1, "c")
    want = augment_batch(np.empty((2, 6, 6, 3), np.float32), x, rows, crop_y, crop_x, flip, scale, shift, 1,
                         "numpy")
    np.testing.assert_array_equal(got, want)


def test_augment_batch_refuses_layouts_the_c_kernel_cannot_read():
    rows, crop_y, crop_x, flip, scale, shift = batch_args()
    x = np.asfortranarray(images())
    with pytest.raises(ValueError, match="augment_batch: x of shape .* must be C-contiguous"):
        augment_batch(np.empty((2, 6, 6, 3), np.float32), x, rows, crop_y, crop_x, flip, scale, shift, 1, "c")
    out = np.empty((2, 6, 6, 3), np.float32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="augment_batch: out of shape .* is read-only"):
        augment_batch(out, images(), rows, crop_y, crop_x, flip, scale, shift, 1, "c")


# ------------------------------------------------------------------ out of memory

@pytest.fixture
def no_allocations():
    previous = lib.minidl_set_alloc_limit(0)   # every allocation now fails
    yield
    lib.minidl_set_alloc_limit(previous)


def test_augment_batch_out_of_memory_is_a_memory_error(no_allocations):
    rows, crop_y, crop_x, flip, scale, shift = batch_args()
    with pytest.raises(MemoryError, match=r"cpu backend: augment_batch could not allocate 192 bytes of scratch: scale and shift rows of 6x3 floats"):
        augment_batch(np.empty((2, 6, 6, 3), np.float32), images(), rows, crop_y, crop_x, flip, scale, shift,
                      1, "c")


def test_gemm_and_conv_out_of_memory_are_memory_errors():
    # A fresh process: the pack buffers the kernels keep between calls are not grown yet.
    code = """if True:
        import numpy as np
        from minidl.backends.cpu import create
        from minidl.backends.cpu._ffi import lib
        cpu = create()
        plan = cpu.conv2d_plan((2, 8, 8, 4), (3, 3, 4, 8), (2, 2), "same")
        x, w = np.ones(plan.in_shape, np.float32), np.ones((3, 3, 4, 8), np.float32)
        lib.minidl_set_alloc_limit(0)
        for call in (lambda: cpu.gemm(np.empty((64, 64), np.float32), np.ones((64, 64), np.float32),
                                      np.ones((64, 64), np.float32)),
                     lambda: cpu.conv2d_backward_filter(np.empty_like(w), None, np.ones(plan.out_shape, np.float32),
                                                        x, plan)):
            try:
                call()
            except MemoryError as error:
                print(error)
        lib.minidl_set_alloc_limit(-1)
        out = np.empty((64, 64), np.float32)
        cpu.gemm(out, np.ones((64, 64), np.float32), np.ones((64, 64), np.float32))
        print(float(out[0, 0]))
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout
    assert lines[0].startswith("cpu backend: gemm could not allocate") and "bytes of scratch" in lines[0]
    assert lines[1].startswith("cpu backend: conv2d_backward_filter could not allocate")
    assert lines[2] == "64.0"                   # the process carries on once memory is back


# ------------------------------------------------------------------ backend ops

def test_outputs_must_be_writable_and_inputs_contiguous_float32():
    a = np.ones((4, 5), np.float32)
    frozen = np.empty_like(a)
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="add: out of shape .* is read-only"):
        cpu.add(frozen, a, a)
    with pytest.raises(ValueError, match="relu|activation_forward: x of shape .* must be C-contiguous"):
        cpu.activation_forward(np.empty((5, 4), np.float32), a.T, "relu")
    with pytest.raises(ValueError, match="multiply: b must be float32, got float64"):
        cpu.multiply(np.empty_like(a), a, a.astype(np.float64))
    with pytest.raises(ValueError, match=r"clip_by_value: g of shape \(4, 5\) is read-only"):
        cpu.clip_by_value(frozen, 1.0)
    plan = cpu.conv2d_plan((1, 5, 5, 2), (3, 3, 2, 3), (1, 1), "same")
    frozen_out = np.empty(plan.out_shape, np.float32)
    frozen_out.setflags(write=False)
    with pytest.raises(ValueError, match="conv2d_forward: out of shape .* is read-only"):
        cpu.conv2d_forward(frozen_out, np.ones(plan.in_shape, np.float32), np.ones((3, 3, 2, 3), np.float32),
                           None, plan)
    with pytest.raises(ValueError, match="global_avg_pool_forward: x must be a 4-D"):
        cpu.global_avg_pool_forward(np.empty((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_max_pool_backward_ignores_argmax_outside_the_window():
    rng = np.random.default_rng(0)
    plan = make_window((2, 4, 4, 3), (2, 2), (2, 2), "valid")
    dout = rng.standard_normal(plan.out_shape).astype(np.float32)
    argmax = rng.integers(0, 4, plan.out_shape).astype(np.int32)
    argmax[0, 0, 0, :] = -1                     # before the window (and before dx)
    argmax[1, 1, 1, :] = 4                      # past the window (and past dx)
    argmax[1, 0, 1, 0] = 2 ** 30
    buffer, dx = guarded(plan.in_shape)
    cpu.max_pool2d_backward(dx, dout, argmax, plan)
    assert_guards_intact(buffer)
    want = np.empty(plan.in_shape, np.float32)
    NumpyBackend().max_pool2d_backward(want, dout, argmax, plan)
    np.testing.assert_array_equal(dx, want)


def test_sparse_targets_out_of_range_name_the_row():
    logits = np.zeros((3, 4), np.float32)
    for targets in (np.array([0, 4, 1], np.int32), np.array([0, -1, 1], np.int32)):
        with pytest.raises(ValueError, match=r"softmax_cross_entropy_forward: sparse targets must lie in "
                                             r"\[0, 4\), got -?\d in row 1"):
            cpu.softmax_cross_entropy_forward(np.empty_like(logits), np.empty(3, np.float32), logits, targets)
        with pytest.raises(ValueError, match=r"top_k_accuracy: .* in row 1"):
            cpu.top_k_accuracy(np.zeros(1, np.float32), logits, targets, 2)
