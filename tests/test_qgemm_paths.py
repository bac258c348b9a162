"""The cpu int8 kernels on each path this CPU has (AMX tiles, the VNNI, AVX2 and generic
micro-kernels), each exactly equal to the integer numpy reference, on the cases of
tests/test_quantization.py and on sizes that cross the AMX path's 32 x 32 blocks and 64-deep k
steps raggedly. The paths the CPU lacks are skipped, saying why."""

import numpy as np
import pytest

from conftest import isa_selected
from test_quantization import CONV_CASES, GEMM_CASES, REFERENCE, _layer_arrays, _run

from minidl import settings
from minidl.backends.base import make_window

lib = pytest.importorskip("minidl._cpu_kernels").lib

PATHS = ("amx", "vnni", "avx2", "generic")


def _select(path):
    """(isa, amx switch) that runs `path`, or skip with the reason this CPU cannot."""
    if path == "amx" and not lib.minidl_amx_available():
        pytest.skip(f"no AMX tiles here ({_amx_status()})")
    if path in ("amx", "vnni") and lib.minidl_cpu_best_isa() < 2:
        pytest.skip(f"the {path} path needs AVX-512, which this CPU lacks")
    if path == "vnni" and not lib.minidl_cpu_has_avx512_vnni():
        pytest.skip("this CPU has no AVX512_VNNI")
    if path == "avx2" and lib.minidl_cpu_best_isa() < 1:
        pytest.skip("this CPU has no AVX2")
    return {"amx": ("avx512", 1), "vnni": ("avx512", 0), "avx2": ("avx2", 0), "generic": ("generic", 0)}[path]


def _amx_status():
    from minidl.backends.cpu._ffi import ffi
    return ffi.string(lib.minidl_amx_status()).decode()


@pytest.fixture(params=PATHS)
def int8_ops(request):
    """The cpu int8 ops with path request.param running, restored after."""
    isa, amx = _select(request.param)
    from minidl.backends.cpu import create
    ops = create()
    with isa_selected(isa):
        lib.minidl_set_amx(amx)
        try:
            assert ops.quantized_path() == request.param
            yield ops
        finally:
            lib.minidl_set_amx(1 if settings.current().amx else 0)


# m crosses 32-row blocks raggedly (and stays under 16), k crosses 64-deep steps (and is not a
# multiple of 4), n crosses 32- and 16-column tiles
RAGGED = [(16, 64, 16), (17, 65, 17), (31, 127, 31), (47, 200, 48), (95, 257, 80), (130, 576, 64)]


@pytest.mark.parametrize("m,k,n", GEMM_CASES + RAGGED)
@pytest.mark.parametrize("out_dtype", [np.uint8, np.float32])
def test_qgemm_each_path_equals_reference(int8_ops, m, k, n, out_dtype):
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    a = rng.integers(0, 256, size=(m, k), dtype=np.uint8)
    a[-1, :] = 255
    _, w, offset, mult = _layer_arrays(rng, k, n, (0.02, 17), 0.05 if out_dtype == np.uint8 else None)
    zp = 9 if out_dtype == np.uint8 else 0
    for relu in (False, True):
        out = np.zeros((m, n), out_dtype)
        expected = out.copy()
        REFERENCE.qgemm_forward(expected, a, w, offset, mult, zp, relu)
        np.testing.assert_array_equal(_run(int8_ops, "qgemm_forward", out, a, w, offset, mult, zp, relu),
                                      expected)


@pytest.mark.parametrize("in_shape,kernel,strides,padding,filters",
                         CONV_CASES + [((3, 10, 10, 16), (3, 3), (1, 1), "same", 32),
                                       ((2, 7, 9, 64), (1, 1), (1, 1), "valid", 40)])
@pytest.mark.parametrize("out_dtype", [np.uint8, np.float32])
def test_qconv2d_each_path_equals_reference(int8_ops, in_shape, kernel, strides, padding, filters, out_dtype):
    rng = np.random.default_rng(sum(in_shape) + filters)
    x = rng.integers(0, 256, size=in_shape, dtype=np.uint8)
    plan = make_window(in_shape, kernel, strides, padding, filters)
    k = kernel[0] * kernel[1] * in_shape[3]
    _, w, offset, mult = _layer_arrays(rng, k, filters, (0.03, 40), 0.1 if out_dtype == np.uint8 else None)
    zp = 128 if out_dtype == np.uint8 else 0
    out = np.zeros((plan.n, plan.oh, plan.ow, filters), out_dtype)
    expected = out.copy()
    REFERENCE.qconv2d_forward(expected, x, w, offset, mult, zp, True, 40, plan)
    got = _run(int8_ops, "qconv2d_forward", out, x, w, offset, mult, zp, True, 40, plan)
    np.testing.assert_array_equal(got, expected)


def test_amx_is_chosen_automatically():
    from minidl.backends.cpu import create
    ops = create()
    if lib.minidl_amx_active():
        assert ops.quantized_path() == "amx"
    else:
        assert ops.quantized_path() in ("vnni", "avx2", "generic")


@pytest.mark.parametrize("a_multiplier,b_multiplier", [(2 ** 31 - 1, -(2 ** 31 - 1)), (-(2 ** 31 - 1), 1),
                                                       (1 << 20, (1 << 20) - 1), (123456789, 987654321 - 2 ** 30)])
def test_add_u8_is_exact_at_the_multipliers_extremes(isa, a_multiplier, b_multiplier):
    """add_u8 splits each multiplier into int32 halves (csrc/internal/qadd_impl.h): exact for
    every multiplier of magnitude < 2**31, on every ISA path."""
    from minidl.backends.cpu import create
    ops = create()
    rng = np.random.default_rng(abs(a_multiplier) % 1000)
    a = rng.integers(0, 256, size=(3, 1000), dtype=np.uint8)
    b = rng.integers(0, 256, size=(3, 1000), dtype=np.uint8)
    a[0, :8], b[0, :8] = [0, 255, 0, 255, 0, 255, 128, 1], [0, 0, 255, 255, 128, 1, 0, 255]
    for za, zb, zo, relu in ((0, 255, 7, False), (255, 0, 200, True), (128, 3, 0, False)):
        out = np.zeros_like(a)
        expected = out.copy()
        REFERENCE.add_u8(expected, a, b, za, zb, a_multiplier, b_multiplier, zo, relu)
        got = _run(ops, "add_u8", out, a, b, za, zb, a_multiplier, b_multiplier, zo, relu)
        np.testing.assert_array_equal(got, expected)
