"""The binary (xnor-popcount) inference kernels: bit-exact against integer references.

The numpy backend's ops against a plain float convolution of the +-1 values (padded with the
pad value); the cpu's fast kernels against their plain C twin on every ISA path this CPU has
(VPOPCNTDQ on avx512 where the CPU has it, the vpshufb look-up on avx2, __builtin_popcount on
generic). tests/test_ops.py compares every backend (opencl included) with the numpy one."""

import numpy as np
import pytest

from minidl.backends.numpy_backend import NumpyBackend

GEOMETRIES = [((2, 7, 6, 3), (3, 3), 5, (1, 1), "same"), ((2, 8, 7, 33), (3, 3), 70, (2, 2), "same"),
              ((1, 9, 9, 64), (5, 5), 16, (1, 1), "valid"), ((3, 6, 5, 100), (2, 3), 129, (1, 2), "same"),
              ((4, 16, 16, 256), (3, 3), 67, (1, 1), "same"),
              # more than 64 taps: the cpu's padding mask no longer holds one bit per tap
              ((1, 12, 11, 5), (9, 9), 7, (1, 1), "same")]


def signs(x):
    return np.where(x >= 0, 1.0, -1.0)


def float_reference(x, w, strides, padding, pad_value):
    """The float64 convolution of the larq signs, the padding filled with pad_value."""
    backend = NumpyBackend("float64")
    plan = backend.conv2d_plan(x.shape, w.shape, strides, padding)
    n, h, wd, c = x.shape
    bottom = (plan.oh - 1) * plan.sh + plan.kh - h - plan.pad_top
    right = (plan.ow - 1) * plan.sw + plan.kw - wd - plan.pad_left
    padded = np.pad(signs(x), ((0, 0), (plan.pad_top, max(bottom, 0)), (plan.pad_left, max(right, 0)), (0, 0)),
                    constant_values=pad_value)
    valid = backend.conv2d_plan(padded.shape, w.shape, strides, "valid")
    out = np.empty(valid.out_shape)
    backend.conv2d_forward(out, padded, signs(w), None, valid)
    return out


@pytest.mark.parametrize("pad_value", [0, 1])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}-k{g[1]}-f{g[2]}-{g[4]}")
def test_numpy_binary_conv_is_the_float_conv_of_the_signs(geometry, pad_value):
    in_shape, kernel, filters, strides, padding = geometry
    rng = np.random.default_rng(0)
    x = rng.standard_normal(in_shape).astype(np.float32)
    x.flat[:2] = [0.0, -0.0]
    w = rng.standard_normal(kernel + (in_shape[3], filters)).astype(np.float32)
    b = NumpyBackend()
    words = -(-in_shape[3] // 32)
    bits = np.empty(in_shape[:3] + (words,), np.int32)
    kbits = np.empty((kernel[0] * kernel[1] * words, filters), np.int32)
    b.binary_pack_input(bits, x)
    b.binary_pack_kernel(kbits, w)
    # the packing is little-endian within each 32-bit word, bit 1 for a negative value
    expected = np.packbits(np.pad(x < 0, ((0, 0),) * 3 + ((0, words * 32 - in_shape[3]),)), axis=-1,
                           bitorder="little").view("<u4").view(np.int32)
    np.testing.assert_array_equal(bits, expected)
    plan = b.conv2d_plan(in_shape, w.shape, strides, padding)
    got = np.empty(plan.out_shape, np.float32)
    b.binary_conv2d_forward(got, bits, kbits, None, plan, pad_value)
    np.testing.assert_array_equal(got, float_reference(x, w, strides, padding, pad_value))


@pytest.mark.parametrize("pad_value", [0, 1])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}-k{g[1]}-f{g[2]}-{g[4]}")
def test_cpu_binary_conv_matches_its_plain_twin(isa, geometry, pad_value):
    from minidl._cpu_kernels import ffi, lib
    from minidl.backends.cpu import create
    from minidl.backends.cpu._ffi import window_struct
    in_shape, kernel, filters, strides, padding = geometry
    backend = create()
    path = lib.minidl_binary_popcount_path()
    assert path == {"generic": 0, "avx2": 1}.get(isa, path)    # avx512: 2 with VPOPCNTDQ, else 1
    rng = np.random.default_rng(1)
    x = rng.standard_normal(in_shape).astype(np.float32)
    w = rng.standard_normal(kernel + (in_shape[3], filters)).astype(np.float32)
    bias = rng.standard_normal(filters).astype(np.float32)
    words = -(-in_shape[3] // 32)
    bits = np.empty(in_shape[:3] + (words,), np.int32)
    kbits = np.empty((kernel[0] * kernel[1] * words, filters), np.int32)
    backend.binary_pack_input(bits, x)
    backend.binary_pack_kernel(kbits, w)
    plan = backend.conv2d_plan(in_shape, w.shape, strides, padding)
    fast = np.full(plan.out_shape, np.nan, np.float32)
    backend.binary_conv2d_forward(fast, bits, kbits, bias, plan, pad_value)
    plain = np.full(plan.out_shape, np.nan, np.float32)
    ptr = lambda a, t="float[]": ffi.from_buffer(t, a)   # noqa: E731
    lib.minidl_binary_conv2d_forward_reference(ptr(plain), ptr(bits, "int32_t[]"), ptr(kbits, "int32_t[]"),
                                               ptr(bias), pad_value, window_struct("test", plan))
    np.testing.assert_array_equal(fast, plain)
    want = float_reference(x, w, strides, padding, pad_value)
    np.testing.assert_array_equal(fast, (want + bias).astype(np.float32))


def test_binary_conv_arguments_are_checked(backend):
    plan = backend.conv2d_plan((1, 4, 4, 3), (3, 3, 3, 2), (1, 1), "same")
    bits = backend.zeros((1, 4, 4, 1), "int32")
    kbits = backend.zeros((9, 2), "int32")
    out = backend.empty((1, 4, 4, 2))
    with pytest.raises(ValueError, match="pad_value"):
        backend.binary_conv2d_forward(out, bits, kbits, None, plan, 2)
    with pytest.raises(ValueError, match="kernel_bits"):
        backend.binary_conv2d_forward(out, bits, backend.zeros((8, 2), "int32"), None, plan, 1)
