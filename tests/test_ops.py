"""Every op of the backend contract on every backend, against the numpy reference backend.

One table, CASES, holds a row per op case: the op (or forward/backward pair) it runs, how its
inputs are built, and its tolerance. test_op runs each row on every backend variant of the
`backend` fixture (tests/conftest.py: numpy in float32, cpu once per ISA path, opencl) and on
NumpyBackend("float64"), the reference, and compares every tensor the calls touched: outputs,
in-place updates, the inputs themselves, and returned tensors. Outputs start out as NaN, so an
element an op forgets to write shows up. Adding an op to the contract means adding a row here;
test_every_contract_op_has_a_row fails until there is one.

Rows whose id ends in "-nan" feed NaN and +-inf: each backend must propagate them exactly as the
numpy backend (IEEE arithmetic) does, NaN for NaN and the same infinities in the same places.
"""

import inspect
import math
import zlib
from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

import numpy as np
import pytest

from minidl.activations import ACTIVATIONS
from minidl.backends.base import Backend, conv_output_length
from minidl.backends.contract.gemm import PackedGemmB
from minidl.backends.numpy_backend import NumpyBackend


# ------------------------------------------------------------------ how a row is written
class Call(NamedTuple):
    op: str
    args: tuple
    kwargs: dict


def call(op, *args, **kwargs):
    """One op call. Array arguments are templates: each backend gets its own copy of each
    (the same array in two calls, or twice in one call, is the same tensor there)."""
    return Call(op, args, kwargs)


@dataclass(eq=False)
class Opaque:
    """A tensor whose contents are backend-defined (max-pool argmax): passed on, never compared."""
    array: np.ndarray


@dataclass(eq=False)
class Host:
    """A host numpy array handed to the op as it is (the source of from_numpy, copy_from_host)."""
    array: np.ndarray


@dataclass(eq=False)
class Quantized:
    """A tensor of the quantized section (uint8 activations, int8 packed weights, the int32 /
    float32 epilogue arrays): uploaded with quantized_upload, compared exactly."""
    array: np.ndarray


@dataclass(eq=False)
class Plan:
    """A window plan, made by each backend with `builder` ("conv2d_plan", "pool2d_plan" or
    "depthwise_conv2d_plan")."""
    builder: str
    args: tuple


def conv_plan(in_shape, kernel_shape, strides, padding, dilation=(1, 1), groups=1):
    return Plan("conv2d_plan", (in_shape, kernel_shape, strides, padding, dilation, groups))


def pool_plan(in_shape, pool, strides, padding):
    return Plan("pool2d_plan", (in_shape, pool, strides, padding))


@dataclass(frozen=True)
class Result:
    """The value returned by call number `index` of the row (reshape's view, zeros' tensor)."""
    index: int


@dataclass(frozen=True)
class Case:
    op: str                      # the op, or the family of a forward/backward pair
    id: str
    build: Callable              # rng -> [Call]; or (calls, check) for rows without a reference
    rtol: float = 1e-5
    atol: float = 1e-6           # times max(1, the largest finite |value|) of each reference tensor
    ref: Optional[str] = "float64"   # the reference's dtype; "float32" where float64 changes the answer


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def out(*shape):
    """An output buffer: NaN everywhere, so that every element must be written."""
    return np.full(shape, np.nan, np.float32)


def with_specials(x, stride=9):
    """x (changed in place) with a NaN, a +inf and a -inf in every `stride` elements of its flat
    order, so that they land in vector bodies, vector tails and every thread's share."""
    flat = x.reshape(-1)
    flat[1::stride] = np.nan
    flat[stride // 2::stride] = np.inf
    flat[stride - 2::stride] = -np.inf
    return x


def row_specials(x):
    """x (changed in place) seen as rows of its last axis: rows 0, 4, ... get a NaN, rows 1, 5, ...
    a +inf, rows 2, 6, ... a -inf, rows 3, 7, ... stay finite (row ops must keep those exact)."""
    rows = x.reshape(-1, x.shape[-1])
    for r in range(rows.shape[0]):
        value = (np.nan, np.inf, -np.inf, None)[r % 4]
        if value is not None:
            rows[r, (7 * r + 1) % rows.shape[1]] = value
    return x


def special_pair(rng, shape):
    """(a, b) with NaN and +-inf in both, placed so that inf + -inf, inf * -inf and inf * 0 occur."""
    a = with_specials(randn(rng, *shape))
    b = randn(rng, *shape)
    fb = b.reshape(-1)
    fb[3::9] = np.nan           # where a is finite
    fb[4::18] = -np.inf         # a is +inf there
    fb[13::18] = 0.0            # a is +inf there
    fb[7::18] = np.inf          # a is -inf there
    return a, b


# ------------------------------------------------------------------ memory
def memory_cases():
    def copy_fill(rng):
        x = with_specials(randn(rng, 3, 5), stride=5)
        return [call("copy", out(15), x), call("fill", np.zeros(9, np.int32), 4),
                call("fill", randn(rng, 2, 7), -2.5), call("copy", np.zeros(9, np.int32), np.arange(9, dtype=np.int32))]

    def allocate(rng):
        return [call("zeros", (2, 3)), call("zeros", (4,), "int32"),
                call("empty", (3, 5)), call("fill", Result(2), 1.5),
                call("empty", (6,), "int32"), call("fill", Result(4), 3)]

    def transfers(rng):
        x = randn(rng, 4, 6)
        return [call("from_numpy", Host(np.array([3, 1, 2]))),
                call("from_numpy", Host(np.linspace(-1, 1, 6).reshape(2, 3))),
                call("from_numpy", Host(np.arange(4.0)), "float32"),
                call("copy_from_host", out(24), Host(randn(rng, 4, 6))),
                call("to_numpy", x), call("shape", x), call("synchronize")]

    def views(rng):
        x = randn(rng, 4, 6)
        return [call("reshape", x, (24,)), call("reshape", x, (2, 3, 4)),
                call("fill", Result(0), 2.0), call("copy", Result(1), randn(rng, 24))]

    def prefix_views(rng):
        x = randn(rng, 24)
        return [call("view", x, (2, 3)), call("fill", Result(0), 2.0),
                call("view", x, (4, 5)), call("copy", Result(2), randn(rng, 20))]

    def counters(rng):
        return [call("add", out(5), randn(rng, 5), randn(rng, 5)),
                call("reset_stats"), call("stats")]

    def storage(rng):
        def check(get, backend):
            # views and reshapes live in x's allocation, a new tensor in its own (the check
            # runs its own ops: get() returns host copies, whose identity means nothing)
            x, y = backend.empty((4, 6)), backend.empty((4, 6))
            assert backend.storage(backend.reshape(x, (24,))) is backend.storage(x)
            assert backend.storage(backend.view(x, (2, 3))) is backend.storage(x)
            assert backend.storage(y) is not backend.storage(x)
        return [call("storage", randn(rng, 4, 6))], check

    def info(rng):
        def check(get, backend):
            described = get(Result(0))
            assert isinstance(described, dict) and described["name"] == backend.name
        return [call("info")], check

    def lends(rng):
        def check(get, backend):
            # host backends lend C-contiguous arrays of their float dtype (read-only inference
            # inputs), nothing else; a device backend lends nothing
            host = backend.name in ("numpy", "cpu")
            native = np.zeros((3, 4), backend.dtype)
            assert backend.lends_host_arrays(native) is host
            assert backend.lends_host_arrays(native.T) is False                   # not C-contiguous
            other = np.float64 if backend.dtype == "float32" else np.float32
            assert backend.lends_host_arrays(native.astype(other)) is False
            assert backend.lends_host_arrays([[0.0] * 4] * 3) is False           # not an array
        return [call("lends_host_arrays", Host(np.zeros((3, 4), np.float32)))], check

    return [Case("copy", "copy-fill", copy_fill, rtol=0, atol=0),
            Case("empty", "empty-zeros", allocate, rtol=0, atol=0),
            Case("from_numpy", "transfers", transfers, rtol=0, atol=0),
            Case("reshape", "reshape-is-a-view", views, rtol=0, atol=0),
            Case("view", "view-of-a-prefix", prefix_views, rtol=0, atol=0),
            Case("stats", "reset-stats", counters),
            Case("storage", "storage-identity", storage, ref=None),
            Case("info", "info", info, ref=None),
            Case("lends_host_arrays", "lends-host-arrays", lends, ref=None)]


# ------------------------------------------------------------------ elementwise
SIZES = [1, 7, 16, 33, 1000, 70001]          # 70001 crosses the cpu threading threshold
ROW_SHAPES = [(1, 1), (1, 17), (5, 3, 7), (64, 10), (33, 129), (700, 101), (9, 17)]


def random_row_shape(seed):
    """(rows, channels) for the row ops (bias_grad, softmax, batchnorm): 1..300 by 1..150."""
    rng = np.random.default_rng(3000 + seed)
    return int(rng.integers(1, 301)), int(rng.integers(1, 151))


RANDOM_ROW_SHAPES = [random_row_shape(seed) for seed in range(8)]


def elementwise_cases():
    def add(n):
        def build(rng):
            a, b, c = randn(rng, n), randn(rng, n), randn(rng, n)
            return [call("add", out(n), a, b), call("add", c, c, b)]      # out may alias a or b
        return build

    def axpby(n):
        def build(rng):
            x, y, c, d = randn(rng, n), randn(rng, n), randn(rng, n), randn(rng, n)
            return [call("axpby", out(n), 0.3, x, -1.7, y), call("axpby", c, 2.0, x, 0.5, c),
                    call("axpby", d, 0.5, d, 4.0, y)]
        return build

    def multiply(n):
        def build(rng):
            a, b, c = randn(rng, n), randn(rng, n), randn(rng, n)
            return [call("multiply", out(n), a, b), call("multiply", c, b, c)]
        return build

    def bias(shape):
        def build(rng):
            x, y, b = randn(rng, *shape), randn(rng, *shape), randn(rng, shape[-1])
            return [call("bias_add", out(*shape), x, b), call("bias_add", y, y, b),
                    call("bias_grad", out(shape[-1]), x)]
        return build

    def special_binary(op, n):
        def build(rng):
            a, b = special_pair(rng, (n,))
            extra = (0.5, a, -2.0, b) if op == "axpby" else (a, b)
            return [call(op, out(n), *extra)]
        return build

    def bias_nan(rng):
        x, dout = with_specials(randn(rng, 6, 37)), row_specials(randn(rng, 9, 37))
        b = randn(rng, 37)
        b[[2, 4, 7]] = [np.nan, -np.inf, np.inf]    # x[0, 4] is +inf, x[0, 7] is -inf
        return [call("bias_add", out(6, 37), x, b), call("bias_grad", out(37), dout)]

    cases = []
    for n in SIZES:
        cases += [Case("add", f"add-{n}", add(n)), Case("axpby", f"axpby-{n}", axpby(n)),
                  Case("multiply", f"multiply-{n}", multiply(n))]
    cases += [Case("bias_add", "bias-" + "x".join(map(str, s)), bias(s)) for s in ROW_SHAPES + RANDOM_ROW_SHAPES]
    for n in (37, 70001):
        cases += [Case(op, f"{op}-{n}-nan", special_binary(op, n)) for op in ("add", "axpby", "multiply")]
    cases.append(Case("bias_add", "bias-nan", bias_nan))
    return cases


# ------------------------------------------------------------------ activations


def activation_cases():
    def build(name, shape, specials):
        def make(rng):
            x = randn(rng, *shape, scale=4.0)
            if specials:
                (row_specials if len(shape) > 1 else with_specials)(x)
            else:
                x.flat[:3] = [0.0, -1e-4, 3e-5][:x.size]       # near 0, where tanh cancels
                if x.size > 5:
                    x.flat[3:6] = [-95.0, 95.0, 20.0]         # saturation, exp clamping
            y, dout, inplace = out(*shape), randn(rng, *shape), randn(rng, *shape)
            if specials:
                dout.flat[[3, dout.size - 1]] = [np.nan, np.inf]
            alpha = 1.3 if name == "elu" else 0.2
            return [call("activation_forward", y, x, name, alpha=alpha),
                    call("activation_backward", out(*shape), dout, y, name, alpha, x),  # x: the input
                    call("activation_backward", inplace, inplace, y, name, alpha, x),  # dx aliases dout
                    call("activation_forward", x, x, name, alpha=alpha)]                 # out aliases x
        return make

    cases = []
    for name in ACTIVATIONS:
        for shape in ROW_SHAPES + (RANDOM_ROW_SHAPES if name == "softmax" else []):
            cases.append(Case("activation", f"{name}-" + "x".join(map(str, shape)),
                              build(name, shape, False), rtol=1e-5, atol=1e-6))
        for shape in ((8, 37), (301,)):
            cases.append(Case("activation", f"{name}-" + "x".join(map(str, shape)) + "-nan",
                              build(name, shape, True), rtol=1e-5, atol=1e-6))
    return cases


# ------------------------------------------------------------------ gemm
GEMM_SIZES = [(1, 1, 1), (7, 13, 5), (13, 7, 129), (129, 33, 17), (64, 64, 64), (97, 300, 258),
              (2, 517, 3), (300, 1, 1000), (8, 32, 5), (37, 53, 29), (70, 97, 130), (16, 64, 0)]


TRANSPOSES = ((False, False), (True, False), (False, True), (True, True))


def gemm_case(m, n, k, alpha, beta, transposes=TRANSPOSES, specials=False, precision=None):
    """One call per (trans_a, trans_b), each into its own output."""
    extra = {} if precision is None else {"precision": precision}
    def build(rng):
        calls = []
        for trans_a, trans_b in transposes:
            a = randn(rng, *((k, m) if trans_a else (m, k)))
            b = randn(rng, *((n, k) if trans_b else (k, n)))
            c = out(m, n) if beta == 0 else randn(rng, m, n)      # beta 0 never reads out
            if specials:
                a.flat[[3, a.size // 2]] = [np.nan, np.inf]
                b.flat[[1, b.size - 2]] = [-np.inf, np.nan]
                if beta != 0:
                    c.flat[[0, c.size - 1]] = [np.nan, np.inf]
            calls.append(call("gemm", c, a, b, alpha, beta, trans_a, trans_b, **extra))
        return calls
    return Case("gemm", f"gemm-{m}x{n}x{k}-a{alpha:g}b{beta:g}" + ("" if precision is None else f"-{precision}")
                + ("-nan" if specials else ""), build, rtol=1e-4, atol=3e-5)


def gemm_packed_case(m, n, k, beta, trans_b):
    """op(b) packed once by pack_gemm_b, then two products with it (the packed operand is
    reusable), then another b packed into the same storage (into=) and a product with that."""
    def build(rng):
        b_shape = (n, k) if trans_b else (k, n)
        calls = [call("pack_gemm_b", randn(rng, *b_shape), trans_b)]
        for source in (0, 0, 3):
            if source == 3:
                calls.append(call("pack_gemm_b", randn(rng, *b_shape), trans_b, Result(0)))
            c = out(m, n) if beta == 0 else randn(rng, m, n)
            calls.append(call("gemm_packed", c, randn(rng, m, k), Result(source), beta))
        return calls
    return Case("gemm", f"gemm_packed-{m}x{n}x{k}-b{beta:g}" + ("-tb" if trans_b else ""), build,
                rtol=1e-4, atol=3e-5)


def gemm_cases():
    # k over one KC block (300), n not a multiple of any micro-kernel's width, and a product
    # large enough for two threads
    cases = [gemm_packed_case(m, n, k, beta, trans_b) for m, n, k in ((1, 1, 1), (7, 13, 300), (37, 300, 258))
             for beta in (0.0, -1.3) for trans_b in (False, True)]
    cases += [gemm_case(m, n, k, alpha, beta) for m, n, k in GEMM_SIZES
             for alpha, beta in ((1.0, 0.0), (0.7, -1.3))]     # alpha 1 reads A in place, else packs it
    # few blocks of C and a long k axis: the opencl GEMM cuts the product into k slices
    cases.append(gemm_case(27, 37, 5000, 0.5, -1.0, transposes=TRANSPOSES[:2]))
    cases += [gemm_case(m, n, k, alpha, beta, transposes=(TRANSPOSES[0], TRANSPOSES[3]), specials=True)
              for m, n, k in ((13, 17, 29), (37, 53, 29)) for alpha, beta in ((1.0, 0.0), (0.7, -1.3))]
    return cases


# ------------------------------------------------------------------ convolution
# (N, H, W, C), (KH, KW), F, strides, padding. On the cpu, two or more images at stride 1 take
# the implicit (no im2col) path unless channels or areas make im2col cheaper; the last cpu cases
# take it for all three ops (one cuts each 3 x 96-float run into pieces of at most KC floats).
# On opencl, 8 channels or more take the direct family's implicit GEMM (forward, and
# backward-data when F >= 8); 4608 pixels split the filter gradient into slices.
CONV_GEOMETRIES = [
    ((1, 7, 9, 3), (3, 3), 5, (1, 1), "same"),
    ((2, 8, 8, 4), (3, 3), 8, (1, 1), "valid"),
    ((3, 11, 6, 2), (5, 5), 3, (2, 2), "same"),
    ((2, 13, 13, 5), (5, 5), 7, (3, 3), "valid"),
    ((1, 9, 10, 6), (1, 1), 4, (1, 1), "same"),
    ((4, 5, 5, 16), (1, 1), 33, (1, 1), "valid"),
    ((2, 9, 7, 3), (1, 1), 6, (2, 3), "valid"),
    ((3, 10, 12, 4), (3, 1), 5, (2, 1), "same"),
    ((1, 6, 5, 2), (3, 5), 3, (3, 2), "same"),
    ((1, 4, 4, 1), (5, 5), 1, (1, 1), "same"),        # kernel larger than the image
    ((5, 17, 17, 32), (3, 3), 32, (1, 1), "same"),
    ((2, 30, 30, 32), (3, 3), 8, (1, 1), "valid"),
    ((2, 16, 16, 32), (5, 5), 16, (1, 1), "same"),
    ((2, 9, 9, 96), (3, 3), 40, (1, 1), "same"),
    ((2, 9, 7, 3), (3, 3), 5, (1, 1), "same"),
    ((1, 8, 8, 2), (3, 3), 4, (2, 2), "same"),        # asymmetric: the odd pixel goes after
    ((3, 10, 9, 4), (5, 2), 33, (2, 3), "valid"),
    ((2, 6, 5, 7), (1, 1), 6, (1, 1), "valid"),       # pointwise: no im2col
    ((2, 7, 7, 1), (4, 4), 8, (3, 2), "same"),
    ((2, 7, 6, 3), (4, 2), 5, (1, 1), "same"),        # stride 1, even kernel: asymmetric padding
    ((1, 6, 7, 2), (3, 2), 3, (1, 1), "valid"),
    ((2, 9, 8, 12), (3, 3), 10, (1, 1), "same"),
    ((3, 7, 9, 9), (2, 3), 40, (2, 2), "same"),
    ((1, 5, 6, 16), (5, 5), 33, (1, 1), "valid"),
    ((8, 24, 24, 16), (3, 3), 32, (1, 1), "same"),
    ((2, 5, 5, 2), (3, 3), 3, (1, 1), "same"),
    ((2, 6, 6, 2), (2, 2), 3, (1, 1), "same"),        # even kernel: the odd pad pixel goes after
    ((1, 7, 5, 3), (3, 2), 2, (2, 1), "same"),
    ((2, 8, 7, 1), (4, 4), 2, (2, 2), "same"),
    ((1, 9, 6, 2), (2, 3), 3, (3, 2), "valid"),       # strides leave rows unused
    ((2, 6, 5, 3), (1, 1), 2, (2, 2), "same"),
]


def random_conv_geometry(seed):
    """A random convolution: odd sizes, batch from 1, kernel up to 4, stride up to 3, either padding."""
    rng = np.random.default_rng(seed)
    kh, kw = (int(v) for v in rng.integers(1, 5, 2))
    sh, sw = (int(v) for v in rng.integers(1, 4, 2))
    n, c, f = (int(v) for v in (rng.integers(1, 4), rng.integers(1, 13), rng.integers(1, 40)))
    h, w = kh + int(rng.integers(0, 9)), kw + int(rng.integers(0, 9))
    return (n, h, w, c), (kh, kw), f, (sh, sw), ("same", "valid")[seed % 2]


def window_out_shape(in_shape, window, strides, padding, channels=None, dilation=(1, 1)):
    n, h, w, c = in_shape
    return (n, conv_output_length(h, window[0], strides[0], padding, dilation[0]),
            conv_output_length(w, window[1], strides[1], padding, dilation[1]),
            c if channels is None else channels)


def geometry_id(in_shape, window, strides, padding, filters=None):
    f = "" if filters is None else f"x{filters}"
    return (f"{'x'.join(map(str, in_shape))}-k{window[0]}x{window[1]}{f}-s{strides[0]}x{strides[1]}"
            f"-{padding}")


def conv_case(in_shape, kernel, filters, strides, padding, use_bias=True, specials=None,
              dilation=(1, 1), groups=1, precision=None):
    kh, kw = kernel
    extra = {} if precision is None else {"precision": precision}
    kernel_shape = (kh, kw, in_shape[3] // groups, filters)

    def build(rng):
        plan = conv_plan(in_shape, kernel_shape, strides, padding, dilation, groups)
        x, w = randn(rng, *in_shape), randn(rng, *kernel_shape)
        bias = randn(rng, filters) if use_bias else None
        out_shape = window_out_shape(in_shape, kernel, strides, padding, filters, dilation)
        dout = randn(rng, *out_shape)
        if specials == "input":
            with_specials(x, stride=97)
            with_specials(dout, stride=89)
        elif specials == "weight":
            w.flat[[5, w.size - 3]] = [np.nan, np.inf]
        return [call("conv2d_forward", out(*out_shape), x, w, bias, plan, **extra),
                call("conv2d_backward_data", out(*in_shape), dout, w, plan, **extra),
                call("conv2d_backward_filter", out(*kernel_shape), out(filters) if use_bias else None,
                     dout, x, plan, **extra)]
    suffix = ("" if precision is None else f"-{precision}") + ("" if use_bias else "-nobias") + ("" if specials is None else f"-{specials}-nan")
    suffix = ("" if dilation == (1, 1) else f"-d{dilation[0]}x{dilation[1]}") + (
        "" if groups == 1 else f"-g{groups}") + suffix
    return Case("conv2d", "conv2d-" + geometry_id(in_shape, kernel, strides, padding, filters) + suffix,
                build, rtol=1e-4, atol=2e-5)


# (N, H, W, C), (KH, KW), F, strides, padding, dilation, groups: the geometries every backend
# runs on its dilated / grouped path (cpu: im2col with per-group GEMMs; opencl: conv_general.cl)
DILATED_GROUPED_GEOMETRIES = [
    ((2, 9, 9, 4), (3, 3), 6, (1, 1), "same", (2, 2), 2),
    ((3, 10, 11, 8), (3, 2), 8, (2, 1), "valid", (1, 1), 4),
    ((2, 12, 12, 3), (3, 3), 5, (1, 1), "valid", (2, 3), 1),
    ((1, 7, 6, 4), (1, 1), 4, (1, 1), "valid", (1, 1), 4),       # grouped 1x1: no pointwise shortcut
    ((4, 8, 8, 6), (2, 2), 4, (1, 1), "same", (3, 1), 2),        # even dilated kernel: asymmetric pads
    ((5, 17, 17, 32), (3, 3), 32, (1, 1), "same", (2, 2), 1),    # the shape of an implicit-path row
    ((2, 9, 9, 16), (3, 3), 32, (1, 1), "same", (1, 1), 4),
    ((2, 8, 8, 8), (3, 3), 8, (2, 2), "same", (1, 1), 2),
    ((1, 6, 7, 2), (2, 3), 3, (1, 1), "same", (2, 2), 1),
    ((3, 7, 7, 4), (3, 3), 4, (1, 1), "same", (1, 1), 4),        # one channel per group
]


def dilated_grouped_cases():
    return [conv_case(*g[:5], use_bias=i % 3 != 1, dilation=g[5], groups=g[6])
            for i, g in enumerate(DILATED_GROUPED_GEOMETRIES)]


# (N, H, W, Cin), (KH, KW), filters, strides, padding, output_padding, dilation of a transposed
# convolution; backend.conv2d_transpose_plan gives the plan of the convolution it is the adjoint of
TRANSPOSE_GEOMETRIES = [
    ((2, 5, 5, 4), (3, 3), 6, (2, 2), "same", None, (1, 1)),
    ((2, 5, 6, 4), (3, 3), 5, (2, 2), "valid", None, (1, 1)),
    ((2, 5, 6, 4), (1, 1), 3, (2, 2), "valid", None, (1, 1)),     # kernel < stride: rows no window reads
    ((2, 4, 4, 3), (3, 3), 5, (2, 2), "same", (1, 1), (1, 1)),
    ((2, 4, 4, 3), (3, 3), 5, (2, 2), "valid", (1, 0), (1, 1)),
    ((2, 4, 4, 3), (3, 3), 5, (1, 1), "same", None, (2, 2)),
    ((2, 4, 5, 3), (4, 3), 5, (3, 2), "valid", (2, 1), (1, 1)),
    ((3, 6, 6, 8), (4, 4), 8, (2, 2), "same", None, (1, 1)),
    ((2, 8, 8, 16), (3, 3), 16, (1, 1), "same", None, (1, 1)),    # stride 1: the implicit paths
    ((4, 8, 8, 32), (3, 3), 32, (2, 2), "same", (1, 1), (1, 1)),
]


def conv_transpose_case(in_shape, kernel, filters, strides, padding, output_padding, dilation):
    from minidl.backends.window import transpose_window
    kernel_shape = kernel + (filters, in_shape[3])
    out_shape = transpose_window(in_shape, kernel_shape, strides, padding, output_padding, dilation).in_shape

    def build(rng):
        plan = Plan("conv2d_transpose_plan", (in_shape, kernel_shape, strides, padding, output_padding,
                                              dilation))
        x, w, dy = randn(rng, *in_shape), randn(rng, *kernel_shape), randn(rng, *out_shape)
        # forward, input gradient and kernel gradient of the transposed convolution
        return [call("conv2d_backward_data", out(*out_shape), x, w, plan),
                call("conv2d_forward", out(*in_shape), dy, w, None, plan),
                call("conv2d_backward_filter", out(*kernel_shape), None, x, dy, plan)]
    extra = "" if output_padding is None else f"-op{output_padding[0]}x{output_padding[1]}"
    return Case("conv2d_transpose", "conv2d_transpose-" + geometry_id(in_shape, kernel, strides, padding, filters)
                + extra + f"-d{dilation[0]}x{dilation[1]}", build, rtol=1e-4, atol=2e-5)


def conv_transpose_cases():
    return [conv_transpose_case(*g) for g in TRANSPOSE_GEOMETRIES]


def conv_cases():
    cases = [conv_case(*g, use_bias=i % 3 != 2) for i, g in enumerate(CONV_GEOMETRIES)]
    cases += [conv_case(*random_conv_geometry(seed)) for seed in range(16)]
    for geometry in (CONV_GEOMETRIES[0], CONV_GEOMETRIES[2], ((2, 9, 9, 16), (3, 3), 16, (1, 1), "same")):
        cases.append(conv_case(*geometry, specials="input"))
    # NaN and inf weights with "valid" padding only: with "same" padding numpy (and any im2col path)
    # multiplies them with the zero padding, 0 * inf = NaN, where a kernel that skips the padding
    # does not; the contract does not say whether padding takes part in the products
    cases.append(conv_case(*CONV_GEOMETRIES[1], specials="weight"))
    return cases


def precision_cases():
    """gemm and conv2d with precision= (mixed-precision policies): every backend against the
    reference's rounded operands (cpu bfloat16: AMX tiles where the CPU has them)."""
    cases = [gemm_case(m, n, k, alpha, beta, precision="bfloat16")
             for (m, n, k), (alpha, beta) in (((37, 53, 29), (1.0, 0.0)), ((97, 300, 258), (0.7, -1.3)),
                                               ((2, 517, 3), (1.0, 0.0)), ((16, 64, 0), (0.7, -1.3)))]
    cases.append(gemm_case(70, 97, 130, 1.0, 0.0, precision="float16"))
    cases += [gemm_case(13, 17, 29, alpha, beta, transposes=(TRANSPOSES[0], TRANSPOSES[3]), specials=True,
                        precision="bfloat16") for alpha, beta in ((1.0, 0.0), (0.7, -1.3))]
    for i in (0, 2, 10, 15, 16):
        cases.append(conv_case(*CONV_GEOMETRIES[i], use_bias=i != 15, precision="bfloat16"))
    cases.append(conv_case(*DILATED_GROUPED_GEOMETRIES[0][:5], dilation=(2, 2), groups=2, precision="bfloat16"))
    cases.append(conv_case(*DILATED_GROUPED_GEOMETRIES[2][:5], dilation=(2, 3), precision="bfloat16"))
    cases.append(conv_case(*CONV_GEOMETRIES[2], precision="float16"))
    return cases


# ------------------------------------------------------------------ depthwise convolution
def depthwise_plan(in_shape, kernel_shape, strides, padding):
    return Plan("depthwise_conv2d_plan", (in_shape, kernel_shape, strides, padding))


# (input, kernel, depth multiplier, strides, padding): strides 1 and 2, same and valid, M 1 to 3,
# odd sizes, channel counts below, at and past one vector (8 and 16 lanes) with a tail
DEPTHWISE_GEOMETRIES = [
    ((2, 7, 9, 3), (3, 3), 1, (1, 1), "same"),
    ((2, 7, 9, 3), (3, 3), 2, (2, 2), "same"),
    ((1, 8, 8, 16), (3, 3), 1, (2, 2), "same"),
    ((3, 9, 7, 19), (3, 3), 1, (1, 1), "valid"),
    ((2, 11, 10, 5), (3, 3), 2, (2, 2), "valid"),
    ((1, 6, 5, 1), (5, 5), 3, (1, 1), "same"),
    ((2, 5, 9, 8), (3, 2), 1, (1, 3), "valid"),
    ((1, 7, 7, 33), (5, 5), 1, (2, 2), "same"),
    ((2, 4, 6, 4), (1, 1), 2, (1, 1), "valid"),
    ((1, 14, 14, 24), (3, 3), 1, (2, 2), "same"),
    ((2, 5, 5, 7), (5, 5), 1, (1, 1), "valid"),
    ((1, 3, 4, 2), (4, 4), 2, (3, 2), "same"),
]


def depthwise_case(in_shape, kernel, multiplier, strides, padding, use_bias=True, specials=False):
    kernel_shape = kernel + (in_shape[3], multiplier)
    channels = in_shape[3] * multiplier

    def build(rng):
        plan = depthwise_plan(in_shape, kernel_shape, strides, padding)
        x, w = randn(rng, *in_shape), randn(rng, *kernel_shape)
        bias = randn(rng, channels) if use_bias else None
        out_shape = window_out_shape(in_shape, kernel, strides, padding, channels)
        dout = randn(rng, *out_shape)
        if specials:
            with_specials(x, stride=31)
            with_specials(dout, stride=29)
        return [call("depthwise_conv2d_forward", out(*out_shape), x, w, bias, plan),
                call("depthwise_conv2d_backward_data", out(*in_shape), dout, w, plan),
                call("depthwise_conv2d_backward_filter", out(*kernel_shape),
                     out(channels) if use_bias else None, dout, x, plan)]
    suffix = ("" if use_bias else "-nobias") + ("-input-nan" if specials else "")
    return Case("depthwise_conv2d", "depthwise_conv2d-" +
                geometry_id(in_shape, kernel, strides, padding, f"m{multiplier}") + suffix,
                build, rtol=1e-4, atol=2e-5)


def depthwise_cases():
    cases = [depthwise_case(*g, use_bias=i % 4 != 3) for i, g in enumerate(DEPTHWISE_GEOMETRIES)]
    # NaN and inf in x and dout with "valid" padding only: with "same" padding numpy multiplies
    # an inf dout with the zero padding in backward-filter (NaN) where the kernels skip the
    # padding; the contract does not say whether padding takes part in the products (as conv2d)
    cases += [depthwise_case(*DEPTHWISE_GEOMETRIES[i], specials=True) for i in (3, 4, 6)]
    return cases
# ------------------------------------------------------------------ upsampling
# (N, H, W, C), size, interpolation; the last rows cross the cpu threading threshold
UPSAMPLE_GEOMETRIES = [
    ((2, 5, 4, 3), (2, 2), "nearest"), ((2, 5, 4, 3), (2, 2), "bilinear"),
    ((1, 3, 7, 2), (3, 2), "nearest"), ((1, 3, 7, 2), (3, 2), "bilinear"),
    ((2, 1, 1, 5), (2, 3), "bilinear"),                  # one pixel: every output reads it
    ((3, 6, 2, 1), (1, 4), "bilinear"), ((3, 6, 2, 1), (4, 1), "bilinear"),
    ((4, 16, 16, 32), (2, 2), "nearest"), ((4, 16, 16, 32), (2, 2), "bilinear"),
    ((2, 9, 11, 17), (3, 3), "bilinear"),
]


def upsample_cases():
    def case(shape, size, interpolation):
        n, h, w, c = shape
        big = (n, h * size[0], w * size[1], c)

        def build(rng):
            return [call("upsample2d_forward", out(*big), randn(rng, *shape), size, interpolation),
                    call("upsample2d_backward", out(*shape), randn(rng, *big), size, interpolation)]
        return Case("upsample2d", f"upsample2d-{'x'.join(map(str, shape))}-{size[0]}x{size[1]}-{interpolation}",
                    build)
    return [case(*g) for g in UPSAMPLE_GEOMETRIES]


# ------------------------------------------------------------------ pooling, padding, concat
POOL_GEOMETRIES = [
    ((1, 5, 5, 1), (2, 2), (2, 2), "valid"),
    ((2, 7, 9, 3), (3, 3), (2, 2), "same"),
    ((1, 8, 8, 17), (2, 2), (1, 1), "same"),
    ((3, 6, 11, 5), (3, 2), (1, 3), "valid"),
    ((2, 9, 7, 16), (5, 5), (2, 1), "same"),
    ((1, 4, 4, 2), (4, 4), (4, 4), "same"),
    ((4, 32, 32, 8), (3, 3), (2, 2), "same"),
    ((2, 7, 9, 3), (2, 2), (2, 2), "valid"),
    ((1, 7, 8, 2), (3, 3), (2, 2), "same"),            # overlapping windows, asymmetric padding
    ((3, 5, 6, 4), (3, 2), (1, 1), "same"),
    ((2, 4, 4, 1), (4, 4), (4, 4), "valid"),
    ((2, 6, 6, 2), (2, 2), (2, 2), "valid"),
    ((1, 5, 5, 3), (2, 2), (2, 2), "same"),
    ((2, 5, 7, 2), (3, 3), (2, 2), "same"),
    ((1, 7, 6, 2), (3, 2), (1, 2), "same"),            # overlapping, non-square windows
    ((2, 4, 4, 1), (3, 3), (1, 1), "same"),
    ((1, 7, 7, 2), (3, 3), (2, 2), "valid"),
]


def random_pool_geometry(seed):
    rng = np.random.default_rng(1000 + seed)
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, 21))
    kh, kw, sh, sw = (int(v) for v in (*rng.integers(1, 5, 2), *rng.integers(1, 4, 2)))
    padding = ("same", "valid")[seed % 2]
    low = (kh, kw) if padding == "valid" else (1, 1)
    h, w = int(rng.integers(low[0], 10)), int(rng.integers(low[1], 10))
    return (n, h, w, c), (kh, kw), (sh, sw), padding


def pool_cases():
    def max_pool(in_shape, pool, strides, padding, fill):
        def build(rng):
            plan = pool_plan(in_shape, pool, strides, padding)
            x = randn(rng, *in_shape)
            if fill == "ties":
                x[..., 0] = np.round(x[..., 0])          # ties: the lowest window index wins
            elif fill == "coarse":
                x = np.round(x * 2) / 2                  # plenty of ties everywhere
            elif fill == "-inf":
                x[...] = -np.inf                         # padding never wins, even against -inf
                x[0, 1, 1, -1] = -5.0
            elif fill == "nan":
                with_specials(x, stride=41)
            out_shape = window_out_shape(in_shape, pool, strides, padding)
            argmax, dout = Opaque(np.zeros(out_shape, np.int32)), randn(rng, *out_shape)
            return [call("max_pool2d_forward", out(*out_shape), argmax, x, plan),
                    call("max_pool2d_backward", out(*in_shape), dout, argmax, plan)]
        return build

    def avg_pool(in_shape, pool, strides, padding, fill):
        def build(rng):
            plan = pool_plan(in_shape, pool, strides, padding)
            out_shape = window_out_shape(in_shape, pool, strides, padding)
            x, dout = randn(rng, *in_shape), randn(rng, *out_shape)
            if fill == "nan":
                with_specials(x, stride=41)
                with_specials(dout, stride=37)
            return [call("avg_pool2d_forward", out(*out_shape), x, plan),
                    call("avg_pool2d_backward", out(*in_shape), dout, plan)]
        return build

    def rows(geometry, fill, tag=""):
        gid = geometry_id(*geometry) + tag
        return [Case("max_pool2d", f"max_pool2d-{gid}", max_pool(*geometry, fill), rtol=2.5e-7, atol=1e-7),
                Case("avg_pool2d", f"avg_pool2d-{gid}", avg_pool(*geometry, fill), rtol=1e-5, atol=1e-6)]

    cases = []
    for geometry in POOL_GEOMETRIES:
        cases += rows(geometry, "ties")
    for seed in range(24):
        cases += rows(random_pool_geometry(seed), "coarse", f"-seed{seed}")
    for geometry in (((1, 3, 3, 2), (3, 3), (1, 1), "same"), ((1, 4, 4, 1), (3, 3), (1, 1), "same")):
        cases.append(Case("max_pool2d", f"max_pool2d-{geometry_id(*geometry)}-minus-inf",
                          max_pool(*geometry, "-inf"), rtol=2.5e-7, atol=1e-7))
    for geometry in (POOL_GEOMETRIES[1], POOL_GEOMETRIES[2], POOL_GEOMETRIES[4]):
        cases += rows(geometry, "nan", "-nan")
    return cases


def layout_cases():
    def global_pool(shape, specials):
        def build(rng):
            n, h, w, c = shape
            x, dout = randn(rng, *shape), randn(rng, n, c)
            if specials:
                with_specials(x, stride=23)
                row_specials(dout)
            return [call("global_avg_pool_forward", out(n, c), x),
                    call("global_avg_pool_backward", out(*shape), dout)]
        return build

    def pad(shape, pads, specials):
        def build(rng):
            t, b, l, r = pads
            padded = (shape[0], shape[1] + t + b, shape[2] + l + r, shape[3])
            x, dout = randn(rng, *shape), randn(rng, *padded)
            if specials:
                with_specials(x, stride=5)
                with_specials(dout, stride=7)
            return [call("pad2d_forward", out(*padded), x, pads),    # the border must be written too
                    call("pad2d_backward", out(*shape), dout, pads)]
        return build

    def concat(lead, widths, specials):
        def build(rng):
            xs = [randn(rng, *lead, w) for w in widths]
            dout = randn(rng, *lead, sum(widths))
            if specials:
                for x in xs:
                    with_specials(x, stride=5)
                with_specials(dout, stride=7)
            return [call("concat_forward", out(*lead, sum(widths)), xs),
                    call("concat_backward", [out(*x.shape) for x in xs], dout)]
        return build

    cases = [Case("global_avg_pool", "global_avg_pool-" + "x".join(map(str, s)), global_pool(s, False))
             for s in ((1, 1, 1, 1), (2, 3, 5, 7), (4, 8, 8, 33), (8, 16, 16, 64), (3, 5, 4, 6))]
    cases.append(Case("global_avg_pool", "global_avg_pool-2x3x5x7-nan", global_pool((2, 3, 5, 7), True)))
    pad_rows = [((1, 3, 4, 2), (1, 2, 0, 3)), ((2, 5, 5, 3), (0, 0, 0, 0)), ((3, 8, 6, 16), (2, 1, 1, 2)),
                ((3, 5, 4, 6), (1, 2, 0, 3))]
    cases += [Case("pad2d", "pad2d-" + "x".join(map(str, s)) + "-" + "".join(map(str, p)),
                   pad(s, p, False), rtol=0, atol=0) for s, p in pad_rows]
    cases.append(Case("pad2d", "pad2d-nan", pad(*pad_rows[2], True), rtol=0, atol=0))
    concat_rows = [((1,), (1, 7, 16)), ((3, 4), (1, 7, 16)), ((2, 5, 5), (1, 7, 16)), ((2, 3), (4, 1, 5))]
    cases += [Case("concat", "concat-" + "x".join(map(str, lead)) + "-" + "-".join(map(str, widths)),
                   concat(lead, widths, False), rtol=0, atol=0) for lead, widths in concat_rows]
    cases.append(Case("concat", "concat-nan", concat((3, 4), (1, 7, 16), True), rtol=0, atol=0))
    return cases


# ------------------------------------------------------------------ batchnorm
def batchnorm_case(shape, specials=False):
    def build(rng):
        c = shape[-1]
        x = randn(rng, *shape, scale=3.0) + 2.0
        gamma, beta = randn(rng, c), randn(rng, c)
        mean, invstd = out(c), out(c)
        moving_mean, moving_var = randn(rng, c), np.abs(randn(rng, c)) + 0.1
        infer_mean, infer_var = randn(rng, c), np.abs(randn(rng, c)) + 0.1
        dout = randn(rng, *shape)
        if specials:                      # one channel each: NaN, +inf, -inf, +inf with -inf
            rows = x.reshape(-1, c)
            rows[2, 0], rows[4, 1], rows[1, 2], rows[3, 3], rows[0, 3] = np.nan, np.inf, -np.inf, np.inf, -np.inf
            dout.reshape(-1, c)[5, 4] = np.nan
            infer_var[5], infer_mean[6] = np.nan, np.inf
        return [call("batchnorm_forward_train", out(*shape), mean, invstd, x, gamma, beta,
                     moving_mean, moving_var, 0.9, 1e-3),
                call("batchnorm_forward_infer", out(*shape), x, gamma, beta, infer_mean, infer_var, 1e-3),
                call("batchnorm_backward", out(*shape), out(c), out(c), dout, x, mean, invstd, gamma)]
    return Case("batchnorm", "batchnorm-" + "x".join(map(str, shape)) + ("-nan" if specials else ""), build,
                rtol=2e-4, atol=2e-5)


def batchnorm_cases():
    shapes = [(1, 1), (7, 3), (2, 5, 5, 17), (16, 8, 8, 32), (64, 100), (5, 3, 4, 7), (130, 3), (1, 1, 1, 2)]
    shapes += RANDOM_ROW_SHAPES
    return [batchnorm_case(shape) for shape in shapes] + [batchnorm_case((12, 8), specials=True)]


def layernorm_case(shape, specials=False, centered=True):
    rows, c = shape

    def build(rng):
        x = randn(rng, rows, c, scale=2.0) + randn(rng, rows, 1, scale=3.0)   # rows of their own offset
        gamma, beta, dout = randn(rng, c), randn(rng, c), randn(rng, rows, c)
        if specials:
            row_specials(x)
            dout.flat[[2, dout.size - 1]] = [np.nan, np.inf]
        y, mean, invstd = out(rows, c), out(rows), out(rows)
        return [call("layernorm_forward", y, mean, invstd, x, gamma, beta, 1e-3, centered),
                call("layernorm_backward", out(rows, c), out(c), out(c), dout, x, mean, invstd, gamma,
                     centered)]
    return Case("layernorm", "layernorm-" + "x".join(map(str, shape)) + ("" if centered else "-rms")
                + ("-nan" if specials else ""), build, rtol=1e-4, atol=1e-5)


def layernorm_cases():
    shapes = [(1, 1), (1, 7), (7, 3), (33, 64), (130, 17), (512, 300), (3, 1000)]
    return ([layernorm_case(shape) for shape in shapes] + [layernorm_case((12, 8), specials=True)]
            + [layernorm_case(shape, centered=False) for shape in ((1, 7), (33, 64), (130, 17))]
            + [layernorm_case((12, 8), specials=True, centered=False)])


def prelu_case(shape, specials=False):
    rows, k = shape

    def build(rng):
        x, alpha, dout = randn(rng, rows, k), randn(rng, k, scale=0.3), randn(rng, rows, k)
        x.flat[:2] = 0.0                                       # slope 0 at x == 0 (Keras)
        if specials:
            with_specials(x)
            dout.flat[[3, dout.size - 1]] = [np.nan, np.inf]
        inplace = x.copy()
        return [call("prelu_forward", out(rows, k), x, alpha),
                call("prelu_backward", out(rows, k), out(k), dout, x, alpha),
                call("prelu_forward", inplace, inplace, alpha)]           # out aliases x
    return Case("prelu", "prelu-" + "x".join(map(str, shape)) + ("-nan" if specials else ""), build)


def channel_mask_case(shape, specials=False):
    n, k, c = shape

    def build(rng):
        x, mask = randn(rng, n, k, c), randn(rng, n, c)
        if specials:
            with_specials(x)
        return [call("channel_mask_multiply", out(n, k, c), x, mask),
                call("channel_mask_multiply", x, x, mask)]                # out aliases x
    return Case("channel_mask", "channel_mask-" + "x".join(map(str, shape)) + ("-nan" if specials else ""),
                build, rtol=0, atol=0, ref="float32")


def gaussian_noise_case(shape, stddev, seed, specials=False):
    """No reference (each backend draws its own noise): the properties the contract promises."""
    def build(rng):
        x = randn(rng, *shape)
        if specials:
            with_specials(x)
        outs = [out(*shape) for _ in range(3)]
        calls = [call("gaussian_noise", o, x, stddev, s) for o, s in zip(outs, (seed, seed, seed + 2 ** 40))]

        def check(get, backend):
            a, b, c = (get(o) for o in outs)
            np.testing.assert_array_equal(a, b)                        # same seed, same noise
            finite = np.isfinite(x)
            np.testing.assert_array_equal(np.isnan(a), np.isnan(x))    # NaN stays NaN, inf stays inf
            np.testing.assert_array_equal(a[~finite & ~np.isnan(x)], x[~finite & ~np.isnan(x)])
            z = ((a[finite] - x[finite]) / stddev).astype(np.float64)
            n = z.size
            assert abs(z.mean()) < 5 / math.sqrt(n)                    # 5 sigma
            assert abs(z.std() - 1) < 5 * math.sqrt(0.5 / n) + 1e-3
            assert np.mean(z > 1.96) < 0.025 + 5 * math.sqrt(0.025 / n)   # a normal's tails, not a uniform's
            assert np.max(np.abs(z)) < 7
            assert (c != a)[finite].mean() > 0.99                      # the seed's high half counts
            if n > 2:
                assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 5 / math.sqrt(n)
        return calls, check
    name = "x".join(map(str, shape)) + ("-nan" if specials else "")
    return Case("gaussian_noise", f"gaussian_noise-{name}", build, ref=None)


def transpose_case(shape, axes, specials=False):
    def build(rng):
        x = randn(rng, *shape)
        if specials:
            with_specials(x)
        return [call("transpose", out(*(shape[a] for a in axes)), x, axes)]
    name = "x".join(map(str, shape)) + "-" + "".join(map(str, axes)) + ("-nan" if specials else "")
    return Case("transpose", f"transpose-{name}", build, rtol=0, atol=0, ref="float32")


def layer_op_cases():
    cases = [transpose_case(s, a) for s, a in (((5,), (0,)), ((3, 4), (1, 0)), ((2, 3, 4), (0, 2, 1)),
                                               ((2, 3, 4, 5), (0, 3, 1, 2)), ((2, 3, 4, 5), (3, 2, 1, 0)),
                                               ((67, 129), (1, 0)), ((2, 1, 3, 1, 2, 3), (5, 0, 4, 1, 3, 2)))]
    cases.append(transpose_case((4, 5, 6), (2, 0, 1), True))
    cases += [prelu_case(s) for s in ((1, 1), (7, 3), (33, 129), (700, 101))] + [prelu_case((9, 37), True)]
    cases += [channel_mask_case(s) for s in ((1, 1, 1), (2, 9, 3), (4, 49, 64), (3, 1000, 33))]
    cases.append(channel_mask_case((2, 5, 7), True))
    cases += [gaussian_noise_case((300, 1001), 0.5, 1234), gaussian_noise_case((77,), 2.0, 2 ** 40 + 3),
              gaussian_noise_case((301, 67), 0.1, 99, specials=True)]
    return cases


# ------------------------------------------------------------------ images
def random_transforms(rng, n):
    """(n, 8) transforms near the identity: scales, shears, shifts of a few pixels; the first
    one projective (the kernels' general path), the others affine (their direct paths)."""
    t = np.zeros((n, 8), np.float32)
    t[:, [0, 4]] = rng.uniform(0.6, 1.5, (n, 2))
    t[:, [1, 3]] = rng.uniform(-0.4, 0.4, (n, 2))
    t[:, [2, 5]] = rng.uniform(-4, 4, (n, 2))
    t[0, 6:] = rng.uniform(-0.02, 0.02, 2)
    return t


def image_cases():
    def transform(shape, out_hw, interpolation, fill_mode, shared=False, specials=False):
        def build(rng):
            n, h, w, c = shape
            x, dout = randn(rng, *shape), randn(rng, n, *out_hw, c)
            if specials:
                with_specials(x, stride=7)
                with_specials(dout, stride=11)
            t = random_transforms(rng, 1 if shared else n)
            return [call("image_transform_forward", out(n, *out_hw, c), x, t, interpolation, fill_mode, -0.75),
                    call("image_transform_backward", out(*shape), dout, t, interpolation, fill_mode)]
        return build

    def random(kind, ranges, n, h, w, seed):
        def build(rng):
            return [call("image_random_transforms", out(n, 8), kind, ranges, h, w, seed),
                    call("image_random_transforms", out(1, 8), kind, ranges, h, w, seed + 1)]
        return build

    def adjust(op, shape, lower, upper, value_range, seed, specials=False):
        def build(rng):
            x = randn(rng, *shape, scale=60) + 100
            if specials:
                with_specials(x, stride=13)
            return [call(op, out(*shape), x, lower, upper, value_range, seed)]
        return build

    def scale_shift(shape, specials=False):
        def build(rng):
            x, c = randn(rng, *shape), shape[-1]
            if specials:
                with_specials(x)
            y = x.copy()
            return [call("channel_scale_shift", out(*shape), x, randn(rng, c), randn(rng, c)),
                    call("channel_scale_shift", y, y, randn(rng, c), randn(rng, c))]   # in place
        return build

    cases = []
    for interpolation in ("nearest", "bilinear"):
        for fill_mode in ("constant", "nearest", "wrap", "reflect"):
            name = f"image_transform-{interpolation}-{fill_mode}"
            cases.append(Case("image_transform", name, transform((3, 7, 9, 2), (6, 11), interpolation, fill_mode),
                              rtol=1e-4, atol=1e-5))
    cases += [Case("image_transform", "image_transform-shared-row",
                   transform((2, 5, 4, 3), (9, 8), "bilinear", "reflect", shared=True), rtol=1e-4, atol=1e-5),
              Case("image_transform", "image_transform-threaded",
                   transform((4, 40, 36, 16), (33, 41), "bilinear", "wrap"), rtol=1e-4, atol=1e-5),
              Case("image_transform", "image_transform-nan",
                   transform((2, 6, 5, 3), (6, 5), "bilinear", "constant", specials=True), rtol=1e-4, atol=1e-5)]
    def displace(shape, interpolation, fill_mode, clip=(-np.inf, np.inf), specials=False):
        def build(rng):
            x, dout = randn(rng, *shape), randn(rng, *shape)
            field = randn(rng, *shape[:3], 2, scale=3)   # taps several pixels outside the image
            field[0] = 0.0                                # image 0 read in place: exactly x
            if specials:
                with_specials(x, stride=7)
                with_specials(dout, stride=11)
                with_specials(field[1:], stride=13)
            return [call("image_displace_forward", out(*shape), x, field, interpolation, fill_mode, -0.75, clip),
                    call("image_displace_backward", out(*shape), dout, field, interpolation, fill_mode)]
        return build

    for interpolation in ("nearest", "bilinear"):
        for fill_mode in ("constant", "nearest", "wrap", "reflect", "mirror"):
            cases.append(Case("image_displace", f"image_displace-{interpolation}-{fill_mode}",
                              displace((3, 7, 9, 2), interpolation, fill_mode), rtol=1e-4, atol=1e-5))
    cases += [Case("image_displace", "image_displace-clip-1px",
                   displace((2, 1, 6, 3), "bilinear", "mirror", clip=(-0.5, 0.8)), rtol=1e-4, atol=1e-5),
              Case("image_displace", "image_displace-threaded",
                   displace((4, 40, 36, 16), "bilinear", "reflect"), rtol=1e-4, atol=1e-5),
              Case("image_displace", "image_displace-nan",
                   displace((3, 6, 5, 3), "bilinear", "constant", specials=True), rtol=1e-4, atol=1e-5)]
    kinds = [("flip", (1, 1, 0, 0)), ("flip", (1, 0, 0, 0)), ("rotation", (-0.2, 0.3, 0, 0)),
             ("translation", (-0.3, 0.2, -0.1, 0.4)), ("zoom", (-0.3, 0.5, -0.2, 0.1)),
             ("zoom_tied", (-0.5, 0.5, 0, 0)), ("crop", (5, 2, 0, 0)), ("shear", (-0.3, 0.2, 0.1, 0.4))]
    cases += [Case("image_random_transforms", f"image_random_transforms-{kind}-{i}",
                   random(kind, ranges, n, 13, 17, seed), rtol=1e-5, atol=1e-5)
              for i, ((kind, ranges), (n, seed)) in enumerate(zip(kinds, [(5, 3), (70, 2 ** 40 + 9)] * 4))]
    for op in ("random_contrast_forward", "random_brightness_forward"):
        family = op.replace("_forward", "")
        cases += [Case(family, f"{family}-small", adjust(op, (3, 5, 4, 3), 0.3, 0.5, (0, 255), 7), rtol=1e-5, atol=1e-6),
                  Case(family, f"{family}-threaded", adjust(op, (9, 32, 32, 70), 0.2, 0.9, (-10, 200), 2 ** 41 + 5),
                       rtol=1e-5, atol=1e-6),
                  Case(family, f"{family}-nan", adjust(op, (3, 5, 4, 3), 0.1, 0.1, (0, 255), 11, True),
                       rtol=1e-5, atol=1e-6)]
    def color(kind, params, shape, value_range, seed):
        return lambda rng: [call("random_color_forward", out(*shape), randn(rng, *shape, scale=60) + 100,
                                 kind, params, value_range, seed)]
    cases += [Case("random_color", f"random_color-{kind}-{c}", color(kind, params, (7, 5, 4, c), (0, 255), seed),
                   rtol=1e-5, atol=1e-3)
              for kind, params in (("grayscale", (0.5,)), ("invert", (0.0, 1.0)), ("posterize", (1, 8)),
                                   ("solarize", (0.1, 0.4, 0.2, 0.9)), ("degenerate", (-0.9, 0.9)),
                                   ("saturation", (-0.6, 0.8)), ("hue", (0.1, 0.9)))
              for c, seed in ((1, 5), (3, 2 ** 40 + 3)) if c == 3 or kind not in ("saturation", "hue")]
    def auto_contrast(shape, value_range):
        def build(rng):
            x = randn(rng, *shape, scale=60) + 100
            x[0, :, :, 0] = 7.0   # a constant channel keeps its values
            return [call("auto_contrast_forward", out(*shape), x, value_range)]
        return build
    cases += [Case("auto_contrast", f"auto_contrast-{'x'.join(map(str, s))}", auto_contrast(s, vr), rtol=1e-5, atol=1e-3)
              for s, vr in (((3, 5, 4, 3), (0, 255)), ((2, 6, 7, 70), (-10, 300)), ((9, 32, 32, 3), (0, 1)))]
    cases.append(Case("random_color", "random_color-threaded",
                      color("solarize", (0.0, 0.3, 0.0, 0.7), (9, 32, 32, 3), (-10, 300), 17), rtol=1e-5, atol=1e-3))
    cases += [Case("channel_scale_shift", "channel_scale_shift-" + "x".join(map(str, s)), scale_shift(s), rtol=1e-6)
              for s in ((1,), (5, 3), (2, 7, 9, 17), (300, 301))]
    cases.append(Case("channel_scale_shift", "channel_scale_shift-nan", scale_shift((9, 37), True), rtol=1e-6))
    return cases


def image_mix_cases():
    """The mixing augmentation ops (MixUp, CutMix, RandomErasing, RandomGaussianBlur,
    RandomSharpness): per-sample tables as the layers draw them on the host."""
    def mix_table(rng, n):
        return np.stack([rng.uniform(0, 1, n), rng.uniform(-1, 1, n), rng.permutation(n)], 1).astype(np.float32)

    def box_table(rng, n, h, w, sources, shift):
        x0, y0 = rng.uniform(-2, w, n), rng.uniform(-2, h, n)
        boxes = np.stack([x0, x0 + rng.uniform(0, w, n), y0, y0 + rng.uniform(0, h, n),
                          rng.integers(0, sources, n), rng.integers(-shift, shift + 1, n),
                          rng.integers(-shift, shift + 1, n)], 1).astype(np.float32)
        boxes[0, :4] = 0   # an empty box: the image is left as it is
        return boxes

    def mix(shape, specials=False):
        def build(rng):
            x = randn(rng, *shape, scale=50)
            if specials:
                with_specials(x, stride=13)
            return [call("batch_mix_forward", out(*shape), x, mix_table(rng, shape[0]))]
        return build

    def paste(shape, sources, clip, specials=False, shift=0):
        def build(rng):
            n, h, w, c = shape
            x = randn(rng, *shape, scale=50)
            if specials:
                with_specials(x, stride=11)
            # sources: None (x itself, CutMix) or (M, SH, SW), read from offsets (RandomErasing)
            source = x if sources is None else randn(rng, *sources, c, scale=80)
            boxes = box_table(rng, n, h, w, n if sources is None else sources[0], shift)
            return [call("image_paste_forward", out(*shape), x, boxes, source, clip)]
        return build

    def blend(shape, kernel_shape, value_range, specials=False):
        def build(rng):
            x = randn(rng, *shape, scale=60) + 100
            if specials:
                with_specials(x, stride=17)
            weights = rng.uniform(-1, 2, shape[0]).astype(np.float32)
            weights[::3] = 0   # left unfiltered
            kernel = rng.uniform(0, 1, kernel_shape).astype(np.float32)
            return [call("image_filter_blend_forward", out(*shape), x, kernel, weights, value_range)]
        return build

    return ([Case("batch_mix", f"batch_mix-{'x'.join(map(str, s))}", mix(s), rtol=1e-5, atol=1e-6)
             for s in ((5, 4, 3, 2), (7, 10), (1, 6), (64, 32, 32, 3))]
            + [Case("batch_mix", "batch_mix-nan", mix((6, 5, 4, 3), True), rtol=1e-5, atol=1e-6),
               Case("image_paste", "image_paste-cutmix", paste((6, 7, 9, 3), None, (-np.inf, np.inf)), rtol=0, atol=0),
               Case("image_paste", "image_paste-erase", paste((5, 8, 6, 2), (5, 3, 4), (-20.0, 30.0), shift=4),
                    rtol=0, atol=0),
               Case("image_paste", "image_paste-constant", paste((4, 5, 5, 3), (1, 5, 5), (0.0, 255.0)), rtol=0, atol=0),
               Case("image_paste", "image_paste-threaded", paste((64, 32, 32, 3), None, (-np.inf, np.inf)),
                    rtol=0, atol=0),
               Case("image_paste", "image_paste-nan", paste((6, 7, 9, 3), (2, 7, 9), (-10.0, 10.0), True, 2),
                    rtol=0, atol=0)]
            + [Case("image_filter_blend", f"image_filter_blend-{'x'.join(map(str, s))}-{'x'.join(map(str, k))}",
                    blend(s, k, vr), rtol=1e-5, atol=1e-5)
               for s, k, vr in (((5, 6, 7, 3), (3, 3), (0, 255)), ((4, 9, 8, 2), (5, 3), (50, 150)),
                                ((3, 2, 3, 1), (5, 5), (0, 255)), ((9, 32, 32, 3), (3, 3), (0, 255)))]
            + [Case("image_filter_blend", "image_filter_blend-nan", blend((5, 6, 7, 3), (3, 3), (0, 255), True),
                    rtol=1e-5, atol=1e-5)])


def equalize_cases():
    """Equalization, CLAHE and RandomPerspective's transforms (numpy_ops/equalize.py and
    perspective.py are float32 references: ref="float32")."""
    def levels(rng, shape, specials):
        x = np.floor(rng.uniform(0, 256, shape)).astype(np.float32)
        x[..., -1] = np.where(x[..., -1] > 128, 200.0, 60.0)   # a channel filling two bins
        if specials:
            with_specials(x, stride=11)
        return x

    def equalize(shape, value_range, bins, specials=False):
        def build(rng):
            x = levels(rng, shape, specials) * np.float32((value_range[1] - value_range[0]) / 255) \
                + np.float32(value_range[0])
            flat = np.full(shape, 7.0, np.float32)   # one bin: kept as it is
            y = x.copy()
            return [call("equalize_forward", out(*shape), x, value_range, bins),
                    call("equalize_forward", out(*shape), flat, value_range, bins),
                    call("equalize_forward", y, y, value_range, bins)]   # in place
        return build

    def clahe(shape, value_range, clip, grid, specials=False):
        def build(rng):
            x = levels(rng, shape, specials) * np.float32((value_range[1] - value_range[0]) / 255) \
                + np.float32(value_range[0])
            return [call("clahe_forward", out(*shape), x, value_range, clip, grid)]
        return build

    def perspective(n, probability, scale, h, w, seed):
        return lambda rng: [call("image_perspective_transforms", out(n, 8), probability, scale, h, w, seed)]

    cases = [Case("equalize", f"equalize-{i}", equalize(s, vr, bins, specials), rtol=1e-6, atol=1e-6, ref="float32")
             for i, (s, vr, bins, specials) in enumerate((((3, 5, 4, 3), (0, 255), 256, False),
                                                          ((2, 7, 6, 2), (-1, 1), 64, False),
                                                          ((16, 32, 32, 3), (0, 255), 256, False),
                                                          ((3, 5, 4, 3), (0, 255), 256, True)))]
    cases += [Case("clahe", f"clahe-{i}", clahe(s, vr, clip, grid, specials), rtol=1e-5, atol=1e-5, ref="float32")
              for i, (s, vr, clip, grid, specials) in enumerate((((2, 9, 10, 3), (0, 255), 4.0, (8, 8), False),
                                                                  ((3, 37, 29, 2), (0, 1), 2.0, (2, 3), False),
                                                                  ((2, 40, 40, 3), (0, 255), 0.0, (4, 5), False),
                                                                  ((9, 32, 32, 3), (0, 255), 40.0, (2, 2), False),
                                                                  ((2, 9, 10, 3), (0, 255), 4.0, (3, 3), True),
                                                                  # small tiles (opencl's sorted
                                                                  # levels) with a clip that bites
                                                                  ((3, 16, 16, 3), (0, 255), 40.0, (2, 2), False),
                                                                  ((2, 15, 13, 2), (0, 1), 100.0, (3, 4), True),
                                                                  ((2, 8, 8, 3), (0, 255), 0.0, (2, 2), False),
                                                                  # a tile over 65536 pixels: the float sums
                                                                  ((1, 300, 300, 1), (0, 255), 300.0, (1, 1), False)))]
    cases += [Case("image_perspective_transforms", f"image_perspective_transforms-{i}",
                   perspective(n, p, scale, h, w, seed), rtol=1e-4, atol=1e-4, ref="float32")
              for i, (n, p, scale, h, w, seed) in enumerate(((9, (0.0, 1.0), 1.0, 32, 32, 5),
                                                            (70, (0.5, 1.0), 0.3, 37, 29, 2 ** 40 + 9),
                                                            (4, (1.0, 1.0), 0.8, 1, 7, 3)))]
    return cases


# ------------------------------------------------------------------ dropout
def dropout_case(shape, rate, seed, specials=False):
    """No reference (each backend draws its own mask): the properties the contract promises."""
    def build(rng):
        x = randn(rng, *shape)
        if specials:
            with_specials(x)
        seeds, rates = (seed, seed, seed + 2 ** 40, seed), (rate, rate, rate, 0.0)
        buffers = [(out(*shape), out(*shape)) for _ in seeds]
        calls = [call("dropout_forward", o, m, x, r, s) for (o, m), r, s in zip(buffers, rates, seeds)]

        def check(get, backend):
            masks = [get(m) for _, m in buffers]
            for (o, m), r, mask in zip(buffers, rates, masks):
                assert set(np.unique(mask)) <= {0.0, np.float32(1 / (1 - r))}
                with np.errstate(invalid="ignore"):                    # inf * 0 is NaN, as it must be
                    np.testing.assert_allclose(get(o), x * mask, rtol=1e-6, atol=0)
            np.testing.assert_array_equal(masks[0], masks[1])       # same seed, same mask
            np.testing.assert_array_equal(masks[3], 1.0)            # rate 0 keeps everything
            n, p = x.size, 1 - rate
            kept = masks[0] > 0
            assert abs(kept.mean() - p) < 5 * math.sqrt(p * (1 - p) / n) + 1 / n    # 5 sigma
            differ, q = (masks[2] != masks[0]).mean(), 2 * p * (1 - p)
            assert differ > q - 5 * math.sqrt(q * (1 - q) / n)      # the seed's high half counts
            if n > 2:                                               # neighbours are independent
                flat = kept.astype(np.float64).ravel()
                if flat[:-1].std() and flat[1:].std():
                    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 5 / math.sqrt(n)
        return calls, check
    name = "x".join(map(str, shape)) + ("-nan" if specials else "")
    return Case("dropout", f"dropout-{name}", build, ref=None)


def dropout_cases():
    return [dropout_case((300, 1001), 0.3, 1234), dropout_case((301, 67), 0.3, 12345),
            dropout_case((77,), 0.5, 2 ** 40 + 3), dropout_case((64 * 300 + 37,), 0.25, 987654321012),
            dropout_case((9, 37), 0.5, 99, specials=True)]


# ------------------------------------------------------------------ losses
LOSS_SHAPES = [(1, 1), (1, 10), (7, 3), (64, 10), (33, 1000), (13, 9)]


def make_targets(rng, shape, kind):
    if kind == "sparse":
        return rng.integers(0, shape[-1], shape[0]).astype(np.int32)
    if kind == "binary":
        return (rng.random(shape) > 0.5).astype(np.float32)
    t = rng.random(shape)
    return (t / t.sum(axis=-1, keepdims=True)).astype(np.float32)


def loss_cases():
    def softmax_ce(shape, kind, specials):
        def build(rng):
            logits, t = randn(rng, *shape, scale=5.0), make_targets(rng, shape, kind)
            if specials:
                row_specials(logits)
                if kind == "dense":
                    t[3, 2] = np.nan                     # a finite row of logits
            probs = out(*shape)
            return [call("softmax_cross_entropy_forward", probs, out(shape[0]), logits, t),
                    call("softmax_cross_entropy_backward", out(*shape), probs, t, 0.25)]
        return build

    def sigmoid_ce(shape, kind, specials):
        def build(rng):
            logits = randn(rng, *shape, scale=6.0)
            t = make_targets(rng, shape, kind) if kind == "binary" else rng.random(shape).astype(np.float32)
            if specials:
                row_specials(logits)
                t[3, 4] = np.nan
            probs = out(*shape)
            return [call("sigmoid_cross_entropy_forward", probs, out(*shape[:-1]), logits, t),
                    call("sigmoid_cross_entropy_backward", out(*shape), probs, t, 0.5)]
        return build

    def cross_entropy(shape, kind, clip, specials):
        def build(rng):
            probs = rng.uniform(0.05, 0.95, shape).astype(np.float32)
            if clip:
                probs.flat[::5] = 0.0                    # the clip is active here ...
                probs.flat[1::7] = 1.0                   # ... and here
            t = make_targets(rng, shape, kind)
            if specials:
                probs[0, 1], probs[1, 2], probs[2, 0] = np.nan, -np.inf, np.nan
                if kind != "sparse":
                    t[3, 4] = np.nan
            binary = kind == "binary"
            return [call("cross_entropy_forward", out(*shape[:-1]), probs, t, binary),
                    call("cross_entropy_backward", out(*shape), probs, t, binary, 0.5)]
        return build

    def mse(shape, specials):
        def build(rng):
            pred, t = randn(rng, *shape), randn(rng, *shape)
            if specials:
                row_specials(pred)
                t[3, 4] = np.nan
            return [call("mean_squared_error_forward", out(*shape[:-1]), pred, t),
                    call("mean_squared_error_backward", out(*shape), pred, t, 0.5)]
        return build

    def sid(shape):
        return "x".join(map(str, shape))

    cases = []
    for shape in LOSS_SHAPES:
        for kind in ("sparse", "dense"):
            cases.append(Case("softmax_cross_entropy", f"softmax_ce-{sid(shape)}-{kind}",
                              softmax_ce(shape, kind, False), atol=1e-6))
        for kind in ("sparse", "dense", "binary"):
            # float32 and float64 clip at different 1 - 1e-7: the reference clips in float32
            cases.append(Case("cross_entropy", f"cross_entropy-{sid(shape)}-{kind}-clipped",
                              cross_entropy(shape, kind, True, False), atol=1e-5, ref="float32"))
    for kind in ("sparse", "dense", "binary"):
        cases.append(Case("cross_entropy", f"cross_entropy-13x9-{kind}", cross_entropy((13, 9), kind, False, False),
                          atol=1e-5))
    for shape in ((1, 1), (7, 3), (5, 4, 9), (64, 100), (11, 3)):
        cases.append(Case("sigmoid_cross_entropy", f"sigmoid_ce-{sid(shape)}", sigmoid_ce(shape, "soft", False)))
        cases.append(Case("mean_squared_error", f"mse-{sid(shape)}", mse(shape, False)))
    cases.append(Case("sigmoid_cross_entropy", "sigmoid_ce-11x3-binary", sigmoid_ce((11, 3), "binary", False)))
    for kind in ("sparse", "dense"):
        cases.append(Case("softmax_cross_entropy", f"softmax_ce-{kind}-nan", softmax_ce((8, 10), kind, True)))
    for kind in ("sparse", "dense", "binary"):
        cases.append(Case("cross_entropy", f"cross_entropy-{kind}-nan", cross_entropy((8, 10), kind, False, True),
                          atol=1e-5))
    cases += [Case("sigmoid_cross_entropy", "sigmoid_ce-nan", sigmoid_ce((8, 10), "soft", True)),
              Case("mean_squared_error", "mse-nan", mse((8, 10), True))]
    return cases


ROW_LOSS_SHAPES = [(1, 1), (7, 3), (64, 10), (33, 1000), (700, 101)]   # 700x101 crosses the threading threshold


def row_loss_inputs(rng, kind, shape):
    """(pred, targets) in each loss's domain, with its clips and kinks reached somewhere."""
    pred, t = randn(rng, *shape, scale=2.0), randn(rng, *shape)
    if kind in ("mean_squared_logarithmic_error", "poisson"):
        pred, t = np.abs(pred) + 0.01, np.abs(t)
        pred.flat[::7] = 0.0 if kind == "mean_squared_logarithmic_error" else 1e-3   # MSLE's clip at 0
    elif kind == "kl_divergence":
        pred, t = rng.uniform(0, 1, shape).astype(np.float32), rng.uniform(0, 1, shape).astype(np.float32)
        pred.flat[::5], pred.flat[1::9], t.flat[2::6] = 0.0, 1.5, 0.0                # both clips
    elif kind in ("hinge", "squared_hinge"):
        t = np.where(t > 0, 1.0, -1.0).astype(np.float32)
    elif kind == "categorical_hinge":
        t = np.eye(shape[-1], dtype=np.float32)[rng.integers(0, shape[-1], shape[0])]
    elif kind == "cosine_similarity" and shape[0] > 2:
        pred[1] = 0.0                                   # a row below the norm's floor
    return pred, t


def row_loss_case(kind, shape, delta=1.0, specials=False):
    def build(rng):
        pred, t = row_loss_inputs(rng, kind, shape)
        if specials:
            row_specials(pred)
        return [call("row_loss_forward", out(shape[0]), pred, t, kind, delta),
                call("row_loss_backward", out(*shape), pred, t, kind, delta, 0.5)]
    sid = "x".join(map(str, shape))
    return Case("row_loss", f"row_loss-{kind}-{sid}" + (f"-delta{delta:g}" if delta != 1.0 else "")
                + ("-nan" if specials else ""), build, rtol=1e-4, atol=1e-5)


def row_loss_cases():
    from minidl.backends.base import ROW_LOSSES
    cases = [row_loss_case(kind, shape) for kind in ROW_LOSSES for shape in ROW_LOSS_SHAPES]
    cases += [row_loss_case("huber", (64, 10), delta=0.3), row_loss_case("huber", (7, 3), delta=2.5)]
    cases += [row_loss_case(kind, (8, 10), specials=True) for kind in ROW_LOSSES]
    return cases


# ------------------------------------------------------------------ reductions and metrics
def metric_cases():
    def total(n, specials):
        def build(rng):
            x = randn(rng, *n)
            calls = [call("sum", out(1), x), call("sum", np.full(1, 5.0, np.float32), x, accumulate=True)]
            if specials:
                plus, minus = randn(rng, *n), randn(rng, *n)
                plus.flat[-1], minus.flat[0] = np.inf, -np.inf
                calls = [call("sum", out(1), with_specials(x)), call("sum", out(1), plus),
                         call("sum", out(1), minus),
                         call("sum", np.full(1, np.nan, np.float32), plus[::-1].copy(), accumulate=True)]
            return calls
        return build

    def finite(n):
        def build(rng):
            x = randn(rng, n)
            calls = [call("all_finite", out(1), x)]
            for bad in (np.inf, -np.inf, np.nan):
                y = x.copy()
                y[-1 if n < 1000 else n // 2 + 17] = bad      # in the vector tail, mid-thread
                calls.append(call("all_finite", out(1), y))
            return calls
        return build

    def accuracies(shape, dense, specials, weighted=False):
        def build(rng):
            pred = np.round(rng.random(shape) * 4).astype(np.float32)       # many ties
            t = (np.round(randn(rng, *shape)) if dense else make_targets(rng, shape, "sparse"))
            probs, labels = rng.random(shape).astype(np.float32), make_targets(rng, shape, "binary")
            if specials:
                row_specials(pred)
                with_specials(probs, stride=7)
                labels.flat[3::11] = np.nan
            w, elements = (), ()
            if weighted:   # weighted_metrics: a weight per row (per element for binary), some 0
                w = (np.round(rng.random(shape[0]) * 3).astype(np.float32) / 2,)
                elements = (np.round(rng.random(shape) * 3).astype(np.float32) / 2,)
            calls = [call("categorical_accuracy", np.full(1, 2.0, np.float32), pred, t, True, *w),
                     call("binary_accuracy", out(1), probs, labels, False, *elements)]
            calls += [call("top_k_accuracy", out(1), pred, t, k, False, *w) for k in (1, 2, 3, 5)
                      if k <= shape[-1]]
            return calls
        return build

    def sid(shape):
        return "x".join(map(str, shape))

    cases = [Case("sum", f"sum-{n}", total((n,), False), atol=1e-5) for n in SIZES]
    cases.append(Case("sum", "sum-1000x37", total((1000, 37), False), atol=1e-5))
    cases += [Case("sum", f"sum-{n}-nan", total((n,), True), atol=1e-5) for n in (37, 70001)]
    cases += [Case("all_finite", f"all_finite-{n}", finite(n), rtol=0, atol=0) for n in SIZES + [999]]
    for shape in ((1, 1), (9, 5), (100, 10), (33, 1000), (50, 6)):
        for dense in (False, True):
            cases.append(Case("accuracy", f"accuracy-{sid(shape)}-{'dense' if dense else 'sparse'}",
                              accuracies(shape, dense, False), rtol=0, atol=0))
    cases += [Case("accuracy", f"accuracy-{kind}-nan", accuracies((12, 10), kind == "dense", True), rtol=0, atol=0)
              for kind in ("sparse", "dense")]
    cases += [Case("accuracy", f"accuracy-{sid(shape)}-{kind}-weighted",
                   accuracies(shape, kind == "dense", shape == (12, 10), weighted=True), rtol=0, atol=0)
              for shape in ((1, 1), (50, 6), (12, 10)) for kind in ("sparse", "dense")]
    return cases


# ------------------------------------------------------------------ optimizers
OPTIMIZERS = [   # (id, op, hyperparameters)
    ("sgd", "sgd_update", dict(lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0)),
    ("sgd-momentum", "sgd_update", dict(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.01)),
    ("sgd-nesterov", "sgd_update", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.0)),
    ("adam", "adam_update", dict(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=0.004)),
    ("rmsprop", "rmsprop_update", dict(lr=1e-3, rho=0.9, momentum=0.0, epsilon=1e-7, weight_decay=0.0)),
    ("rmsprop-momentum", "rmsprop_update", dict(lr=1e-3, rho=0.9, momentum=0.5, epsilon=1e-7,
                                                weight_decay=0.1)),
    ("adagrad", "adagrad_update", dict(lr=0.01, epsilon=1e-7, weight_decay=0.0)),
    ("adadelta", "adadelta_update", dict(lr=1.0, rho=0.95, epsilon=1e-7, weight_decay=0.0)),
    ("adadelta-decay", "adadelta_update", dict(lr=0.5, rho=0.9, epsilon=1e-6, weight_decay=0.05)),
    ("adamax", "adamax_update", dict(lr=2e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=0.0)),
    ("adamax-decay", "adamax_update", dict(lr=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-7, weight_decay=0.1)),
    ("amsgrad", "amsgrad_update", dict(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=0.0)),
    ("amsgrad-decay", "amsgrad_update", dict(lr=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-7, weight_decay=0.1)),
    ("nadam", "nadam_update", dict(lr=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=0.0)),
    ("nadam-decay", "nadam_update", dict(lr=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-7, weight_decay=0.1)),
    ("lion", "lion_update", dict(lr=1e-3, beta_1=0.9, beta_2=0.99, weight_decay=0.0)),
    ("lion-decay", "lion_update", dict(lr=0.01, beta_1=0.5, beta_2=0.9, weight_decay=0.1)),
    ("ftrl", "ftrl_update", dict(lr=0.1, lr_power=-0.5, l1=0.0, l2=0.0, l2_shrinkage=0.0, weight_decay=0.0)),
    ("ftrl-l1-l2", "ftrl_update", dict(lr=0.1, lr_power=-0.5, l1=0.05, l2=0.1 + 0.5 / 0.2, l2_shrinkage=0.01,
                                       weight_decay=0.02)),
    ("ftrl-power", "ftrl_update", dict(lr=0.05, lr_power=-0.25, l1=0.01, l2=0.0, l2_shrinkage=0.0,
                                       weight_decay=0.0)),
]
# state tensors of each update, in argument order: (kind, present) with kind "any" (normal),
# "positive" (a running average of squares) or "accumulator" (positive, away from zero)
OPTIMIZER_STATE = {
    "adam_update": ("any", "positive"),
    "adagrad_update": ("accumulator",),
    "adadelta_update": ("positive", "positive"),
    "adamax_update": ("any", "positive"),
    "amsgrad_update": ("any", "positive", "positive"),
    "nadam_update": ("any", "positive"),
    "lion_update": ("any",),
    "ftrl_update": ("accumulator", "any"),
}
STEP_OPS = ("adam_update", "adamax_update", "amsgrad_update", "nadam_update")


def optimizer_case(name, op, hyper, n, specials=False):
    """Five steps from random (non-negative where it must be) state; NaN rows poison the first gradient."""
    def build(rng):
        w = randn(rng, n)
        if op == "sgd_update":
            state = (randn(rng, n) if hyper["momentum"] else None,)
        elif op == "rmsprop_update":
            state = (np.abs(randn(rng, n)), randn(rng, n) if hyper["momentum"] else None)
        else:
            make = {"any": lambda: randn(rng, n), "positive": lambda: np.abs(randn(rng, n)),
                    "accumulator": lambda: np.abs(randn(rng, n)) + 0.1}
            state = tuple(make[kind]() for kind in OPTIMIZER_STATE[op])
        calls, u_product = [], 1.0
        for step in range(1, 6 if not specials else 3):
            g = randn(rng, n)
            if specials and step == 1:
                with_specials(g)
            kwargs = dict(hyper, step=step) if op in STEP_OPS else hyper
            if op == "nadam_update":
                u_product *= hyper["beta_1"] * (1.0 - 0.5 * 0.96 ** step)
                kwargs = dict(kwargs, u_product=u_product)
            calls.append(call(op, w, g, *state, **kwargs))
        return calls
    return Case(op, f"{name}-{n}" + ("-nan" if specials else ""), build, rtol=1e-5, atol=1e-6)


def bop_case(n, gamma, threshold, specials=False):
    """larq's Bop: five steps from latent weights (some exactly 0) and a random average; the
    float32 reference, as the flip decisions of a float64 one could differ at the threshold."""
    def build(rng):
        w, m = randn(rng, n), randn(rng, n, scale=0.5)
        w[::7] = 0.0
        calls = []
        for step in range(5 if not specials else 2):
            g = randn(rng, n)
            if specials and step == 0:
                with_specials(g)
            calls.append(call("bop_update", w, g, m, gamma, threshold))
        return calls
    return Case("bop_update", f"bop_update-{n}-{gamma:g}-{threshold:g}" + ("-nan" if specials else ""),
                build, ref="float32")


def clip_case(op, n, value, specials=False):
    def build(rng):
        g = randn(rng, n, scale=3.0)
        if specials == "nan":
            with_specials(g)
        elif specials == "inf":
            g[n // 3] = np.inf
        return [call(op, g, value)]
    suffix = {None: "", "nan": "-nan", "inf": "-inf-nan"}[specials or None]
    return Case(op, f"{op}-{n}-{value:g}{suffix}", build)


def ema_case(n, momentum, specials=False):
    def build(rng):
        average, w = randn(rng, n), randn(rng, n)
        if specials:
            with_specials(w)
        return [call("ema_update", average, w, momentum), call("ema_update", average, w, 0.0),
                call("ema_update", average, randn(rng, n), momentum)]
    return Case("ema_update", f"ema_update-{n}-{momentum:g}" + ("-nan" if specials else ""), build)


def global_norm_case(sizes, clipnorm, specials=None):
    def build(rng):
        grads = [randn(rng, size, scale=3.0) for size in sizes]
        if specials == "nan":
            with_specials(grads[-1])
        elif specials == "inf":
            grads[0][0] = np.inf
        return [call("clip_by_global_norm", grads, clipnorm)]
    suffix = {None: "", "nan": "-nan", "inf": "-inf-nan"}[specials]
    return Case("clip_by_global_norm", f"clip_by_global_norm-{'-'.join(map(str, sizes))}-{clipnorm:g}{suffix}",
                build)


def regularizer_cases():
    def penalty(n, l1, l2, specials):
        def build(rng):
            w, g = randn(rng, n), randn(rng, n)
            if specials:
                with_specials(w)
            total = np.array([1.5], np.float32)
            return [call("l1_l2_penalty", out(1), w, l1, l2), call("l1_l2_penalty", total, w, l1, l2, True),
                    call("l1_l2_gradient", g, w, l1, l2)]
        return Case("l1_l2", f"l1_l2-{n}-{l1:g}-{l2:g}" + ("-nan" if specials else ""), build, rtol=1e-5,
                    atol=1e-5)

    def constraint(shape, axis, low, high, rate, specials=False):
        def build(rng):
            w = randn(rng, *shape, scale=2.0)
            if specials:
                w.reshape(-1)[1] = np.nan
            return [call("norm_constraint", w, axis, low, high, rate)]
        sid = "x".join(map(str, shape))
        return Case("norm_constraint", f"norm_constraint-{sid}-{axis}-{low:g}-{high:g}-{rate:g}"
                    + ("-nan" if specials else ""), build)

    def orthogonal(shape, mode, factor, zero_row=False):
        def build(rng):
            w, g = randn(rng, *shape), randn(rng, *shape)
            if zero_row:
                w[0] = 0.0                        # its norm is floored
            total = np.array([0.5], np.float32)
            return [call("orthogonal_penalty", out(1), w, factor, mode),
                    call("orthogonal_penalty", total, w, factor, mode, True),
                    call("orthogonal_gradient", g, w, factor, mode)]
        sid = "x".join(map(str, shape))
        return Case("orthogonal", f"orthogonal-{sid}-{mode}-{factor:g}" + ("-zero" if zero_row else ""), build,
                    rtol=1e-4, atol=1e-5)

    cases = [orthogonal(shape, mode, 0.01) for shape in ((1, 3), (5, 4), (40, 300)) for mode in ("rows", "columns")]
    cases += [orthogonal((6, 8), "rows", 0.5, zero_row=True), orthogonal((3, 2), "columns", 1.0)]
    cases += [penalty(n, l1, l2, False) for n in (1, 37, 70001) for l1, l2 in ((0.01, 0.0), (0.0, 0.02), (0.3, 0.1))]
    cases += [penalty(37, 0.01, 0.01, True)]
    cases += [constraint((7, 5), 0, 0.0, 2.0, 1.0), constraint((7, 5), 0, 1.0, 1.0, 1.0),
              constraint((3, 3, 4, 6), [0, 1, 2], 0.5, 1.5, 0.3), constraint((3, 3, 4, 6), -1, 0.0, 1.0, 1.0),
              constraint((300, 257), 0, 0.2, 0.9, 0.7), constraint((2, 9, 4), 1, 0.0, 2.0, 1.0),
              constraint((7, 5), 0, 0.0, 2.0, 1.0, True)]
    return cases


def optimizer_cases():
    cases = regularizer_cases() + [ema_case(n, momentum) for n in (1, 33, 70001) for momentum in (0.99, 0.5)]
    cases += [ema_case(37, 0.9, specials=True)]
    cases += [global_norm_case(sizes, clipnorm) for sizes in ((1,), (17, 5), (1001, 70001, 3))
              for clipnorm in (0.5, 2.0, 1e6)]
    cases += [global_norm_case((37, 70001), 2.0, "nan"), global_norm_case((37, 70001), 2.0, "inf")]
    cases += [optimizer_case(name, op, hyper, n) for name, op, hyper in OPTIMIZERS for n in (1, 31, 77, 70001)]
    cases += [optimizer_case(name, op, hyper, 37, specials=True) for name, op, hyper in OPTIMIZERS]
    cases += [bop_case(n, gamma, threshold) for n in (1, 31, 70001) for gamma, threshold in
              ((1e-4, 1e-8), (0.5, 0.3))] + [bop_case(37, 0.5, 0.3, specials=True)]
    for n in (1, 17, 1001, 70001):
        cases += [clip_case("clip_by_value", n, 1.5), clip_case("clip_by_norm", n, 2.0),
                  clip_case("clip_by_norm", n, 0.5), clip_case("clip_by_norm", n, 1e6)]
    for n in (37, 70001):
        cases += [clip_case("clip_by_value", n, 1.5, "nan"), clip_case("clip_by_norm", n, 2.0, "nan"),
                  clip_case("clip_by_norm", n, 2.0, "inf")]
    return cases


# ------------------------------------------------------------------ tensor ops (minidl.ops)
BROADCASTS = [((3, 4), (3, 4)), ((5, 7), (7,)), ((5, 1), (1, 7)), ((2, 3, 4), (3, 1)),
              ((1, 6), (4, 1)), ((2, 1, 3, 1, 2), (4, 3, 1, 1)), ((), (3,)), ((70001,), (70001,)),
              ((300, 400), (400,)), ((301, 1), (301, 257))]


def tensor_op_cases():
    from minidl.backends.base import BINARY_OPS, REDUCE_OPS, UNARY_OPS

    def unary(name, n, specials):
        def build(rng):
            x = randn(rng, n, scale=2.0)
            if name in ("sqrt", "log", "log1p"):
                x = np.abs(x) + 0.01
            if specials:
                with_specials(x)
            y = x.copy()
            return [call("unary", out(n), x, name), call("unary", y, y, name)]   # out may alias x
        return build

    def operand(rng, shape, name):
        if shape == "scalar":
            return 1.75
        x = np.array(randn(rng, *shape), dtype=np.float32)    # 0-d stays an array
        if name == "power":
            x = np.abs(x) + 0.1
        elif name not in ("add", "subtract", "multiply", "divide"):
            x = np.round(x * 2) / 2      # ties for the comparisons, zeros for the logical ops
        return np.asarray(x, dtype=np.float32)    # a 0-d result of numpy is a scalar

    def binary(name, sa, sb, specials):
        def build(rng):
            a, b = operand(rng, sa, name), operand(rng, sb, name)
            if specials:
                a, b = special_pair(rng, sa)
            shape = np.broadcast_shapes(*(np.shape(v) for v in (a, b) if not isinstance(v, float)))
            return [call("binary", out(*shape), a, b, name), call("binary", out(*shape), b, a, name)]
        return build

    def where(specials):
        def build(rng):
            c = (rng.uniform(size=(3, 1, 4)) > 0.5).astype(np.float32)
            a, b = randn(rng, 5, 4), randn(rng, 3, 5, 1)
            if specials:
                with_specials(a, stride=5)
                c[0, 0, 0] = np.nan       # nonzero: selects a
            return [call("where", out(3, 5, 4), c, a, b)]
        return build

    def reduce(name, shape, kept):
        def build(rng):
            x = randn(rng, *shape)
            if name == "prod":
                x = 1.0 + 0.05 * x
            if name in ("max", "min"):
                x = np.round(x * 2) / 2
            return [call("reduce", out(*kept), x, name)]
        return build

    def reduce_nan(rng):
        x = with_specials(randn(rng, 6, 9), stride=7)
        return [call("reduce", out(6, 1), x, n) for n in REDUCE_OPS] + \
            [call("reduce", out(1, 9), x, n) for n in REDUCE_OPS]

    def strided(rng):
        x = randn(rng, 4, 5, 6)
        ints = np.arange(24, dtype=np.int32)
        acc = randn(rng, 4, 6)
        return [call("strided_copy", out(6, 5, 4), x, 0, (1, 6, 30)),            # a transpose
                call("strided_copy", out(2, 3), x, 119, (-31, -2)),               # negative steps
                call("strided_copy", out(3, 4, 6), x, 30, (0, 0, 1)),             # a broadcast
                call("strided_copy", np.zeros((2, 2), np.int32), ints, 5, (12, 3)),
                call("strided_copy", out(), x, 7, ()),                            # x[0, 1, 1]
                call("strided_add", acc, randn(rng, 2, 3), 1, (12, 2)),
                call("strided_add", acc, randn(rng, 4, 3), 3, (6, 1))]

    def take(rng):
        x = randn(rng, 3, 5, 4)
        idx = np.array([4, 0, -1, 2, 2], np.int32)
        dx0, dx1 = randn(rng, 3, 5, 4), randn(rng, 3, 5, 4)
        return [call("take", out(3, 5, 4), x, idx, 1),
                call("take", out(2, 5, 4), x, np.array([2, -3], np.int32), 0),
                call("take", out(3, 5, 5), x, idx[[0, 1, 2, 3, 3]] % 4, 2),
                call("take_backward", dx0, randn(rng, 3, 5, 4), idx, 1),
                call("take_backward", dx1, randn(rng, 3, 5, 2), np.array([1, 1], np.int32), 2)]

    def arg(rng):
        x = np.round(randn(rng, 9, 11) * 2) / 2
        x[2, 3] = np.nan
        x[4, :] = -np.inf
        return [call("arg_reduce", np.zeros(9, np.int32), x, "argmax"),
                call("arg_reduce", np.zeros(9, np.int32), x, "argmin")]

    def cast_arange(rng):
        x = randn(rng, 4, 5, scale=10.0)
        return [call("cast", np.zeros((4, 5), np.int32), x),
                call("cast", out(20), np.arange(-7, 13, dtype=np.int32)),
                call("arange", out(3, 5), -1.5, 0.25),
                call("arange", np.zeros(7, np.int32), 3, -2)]

    def argsort_rows(n_rows, n, specials):
        def build(rng):
            x = np.round(randn(rng, n_rows, n) * 2) / 2           # many ties: stability shows
            if specials:
                x = with_specials(x, stride=7)
            return [call("argsort_rows", np.full((n_rows, n), -1, np.int32), x)]
        return build

    def scan_rows(name, n_rows, n):
        def build(rng):
            x = 1.0 + 0.01 * randn(rng, n_rows, n) if name == "cumprod" else \
                np.abs(randn(rng, n_rows, n)) + 0.1
            aliased = randn(rng, 3, 5)
            return [call("scan_rows", out(n_rows, n), x.astype(np.float32), name),
                    call("scan_rows", aliased, aliased, name)]       # in place
        return build

    def rounding(rng):
        x = randn(rng, 70001) * np.float32(10.0) ** rng.integers(-9, 6, 70001).astype(np.float32)
        x[:9] = [np.nan, np.inf, -np.inf, 65504, 65519.99, 65520, 3e-8, -6.1e-5, 3.4e38]
        inplace = randn(rng, 37)
        return [call("round_to_precision", out(70001), x, "bfloat16"),
                call("round_to_precision", out(70001), x, "float16"),
                call("round_to_precision", inplace, inplace, "bfloat16")]

    cases = []
    cases += [Case("argsort_rows", "argsort_rows-ties", argsort_rows(5, 33, False)),
              Case("argsort_rows", "argsort_rows-nan", argsort_rows(4, 29, True)),
              Case("argsort_rows", "argsort_rows-parallel", argsort_rows(300, 257, False)),
              Case("argsort_rows", "argsort_rows-one-long-row", argsort_rows(1, 5000, False))]
    for name in ("cumsum", "cumprod"):
        cases += [Case("scan_rows", f"scan_rows-{name}", scan_rows(name, 6, 37), rtol=2e-5),
                  Case("scan_rows", f"scan_rows-{name}-parallel", scan_rows(name, 300, 257),
                       rtol=2e-5)]
    for name in UNARY_OPS:
        cases += [Case("unary", f"unary-{name}-{n}", unary(name, n, False), rtol=2e-6)
                  for n in (37, 70001)]
        cases.append(Case("unary", f"unary-{name}-nan", unary(name, 37, True), rtol=2e-6))
    for name in BINARY_OPS:
        # every broadcasting pattern for a few ops, two and a parallel one for the rest (the op
        # code is a switch inside the same loops)
        patterns = BROADCASTS if name in ("add", "subtract", "divide", "maximum", "greater") \
            else BROADCASTS[1:3] + BROADCASTS[-2:-1]
        for sa, sb in patterns:
            cases.append(Case("binary", f"binary-{name}-{sa}-{sb}".replace(" ", ""),
                              binary(name, sa, sb, False), rtol=2e-6))
        cases.append(Case("binary", f"binary-{name}-scalar", binary(name, (6, 5), "scalar", False),
                          rtol=2e-6))
        cases.append(Case("binary", f"binary-{name}-nan", binary(name, (37,), (37,), True),
                          rtol=2e-6))
    cases += [Case("where", "where-broadcast", where(False)), Case("where", "where-nan", where(True))]
    for name in REDUCE_OPS:
        for shape, kept in (((4, 5, 6), (1, 5, 1)), ((4, 5, 6), (4, 1, 6)), ((4, 5, 6), (1, 1, 1)),
                            ((4, 5, 6), (4, 5, 1)), ((300, 400), (1, 400)), ((7,), (1,))):
            cases.append(Case("reduce", f"reduce-{name}-{shape}-{kept}".replace(" ", ""),
                              reduce(name, shape, kept), rtol=2e-5))
    cases += [Case("reduce", "reduce-nan", reduce_nan), Case("strided", "strided-copy-add", strided),
              Case("take", "take", take), Case("arg_reduce", "arg_reduce-nan", arg),
              Case("cast", "cast-arange", cast_arange),
              # exact: the reference rounds the same float32 values
              Case("round_to_precision", "round_to_precision-nan", rounding, rtol=0, atol=0,
                   ref="float32")]
    return cases


# ------------------------------------------------------------------ recurrent
def recurrent_cases():
    """The fused gate ops of one step (sizes past a vector tail, and one large enough to be
    threaded), then each sequence op forward and backward on the same tensors."""
    def lstm_step(n, u, act, ract, with_dc=True):
        def build(rng):
            gates, c_prev = randn(rng, n, 4 * u, scale=2.0), randn(rng, n, u)
            c = out(n, u)
            dc = randn(rng, n, u) if with_dc else None
            return [call("lstm_gates_forward", out(n, u), c, gates, c_prev, act, ract),
                    call("lstm_gates_backward", out(n, 4 * u), out(n, u), randn(rng, n, u), dc, gates,
                         c, c_prev, act, ract)]
        return build

    def gru_step(n, u, act, ract):
        def build(rng):
            gates, rec, h_prev = randn(rng, n, 3 * u, scale=2.0), randn(rng, n, 3 * u), randn(rng, n, u)
            return [call("gru_gates_forward", out(n, u), gates, rec, h_prev, act, ract),
                    call("gru_gates_backward", out(n, 3 * u), out(n, 3 * u), out(n, u),
                         randn(rng, n, u), gates, rec, h_prev, act, ract)]
        return build

    def lstm_sequence(t, n, u, act, ract, dc_last=True):
        def build(rng):
            hseq, cseq, gates = out(t, n, u), out(t, n, u), randn(rng, t, n, 4 * u)
            h0, c0, kernel = randn(rng, n, u), randn(rng, n, u), randn(rng, u, 4 * u, scale=0.3)
            return [call("lstm_forward", hseq, cseq, gates, h0, c0, kernel, act, ract),
                    call("lstm_backward", out(t, n, 4 * u), out(u, 4 * u), out(n, u), out(n, u),
                         randn(rng, t, n, u), randn(rng, n, u) if dc_last else None, gates, cseq,
                         hseq, h0, c0, kernel, act, ract)]
        return build

    def gru_sequence(t, n, u, act, ract):
        def build(rng):
            hseq, gates, recs = out(t, n, u), randn(rng, t, n, 3 * u), out(t, n, 3 * u)
            h0, kernel = randn(rng, n, u), randn(rng, u, 3 * u, scale=0.3)
            return [call("gru_forward", hseq, gates, recs, h0, kernel, randn(rng, 3 * u), act, ract),
                    call("gru_backward", out(t, n, 3 * u), out(t, n, 3 * u), out(u, 3 * u), out(n, u),
                         randn(rng, t, n, u), gates, recs, hseq, h0, kernel, act, ract)]
        return build

    def simple_sequence(t, n, u, act):
        def build(rng):
            hseq, pre = out(t, n, u), randn(rng, t, n, u)
            h0, kernel = randn(rng, n, u), randn(rng, u, u, scale=0.3)
            return [call("simple_rnn_forward", hseq, pre, h0, kernel, act),
                    call("simple_rnn_backward", out(t, n, u), out(u, u), out(n, u),
                         randn(rng, t, n, u), hseq, h0, kernel, act)]
        return build

    pairs = (("tanh", "sigmoid"), ("relu", "hard_sigmoid"), ("linear", "tanh"))
    cases = []
    for act, ract in pairs:
        for n, u in ((3, 5), (4, 37), (130, 700)):
            cases.append(Case("lstm_gates", f"lstm_gates-{n}x{u}-{act}-{ract}",
                              lstm_step(n, u, act, ract), rtol=2e-5))
            cases.append(Case("gru_gates", f"gru_gates-{n}x{u}-{act}-{ract}",
                              gru_step(n, u, act, ract), rtol=2e-5))
        cases.append(Case("lstm_sequence", f"lstm_sequence-{act}-{ract}",
                          lstm_sequence(5, 3, 7, act, ract), rtol=1e-4))
        cases.append(Case("gru_sequence", f"gru_sequence-{act}-{ract}",
                          gru_sequence(5, 3, 7, act, ract), rtol=1e-4))
        cases.append(Case("simple_rnn_sequence", f"simple_rnn_sequence-{act}",
                          simple_sequence(6, 2, 9, act), rtol=1e-4))
    cases.append(Case("lstm_gates", "lstm_gates-no-dc", lstm_step(2, 19, "tanh", "sigmoid", False)))
    # large enough for the cpu's whole-sequence loops to split the batch rows over two threads
    # (csrc/rnn_sequence.c): an odd batch, units not a multiple of any micro-kernel's width
    for act, ract in pairs[:2]:
        cases.append(Case("lstm_sequence", f"lstm_sequence-threaded-{act}-{ract}",
                          lstm_sequence(6, 29, 45, act, ract), rtol=1e-4))
    cases.append(Case("lstm_sequence", "lstm_sequence-threaded-no-dc-last",
                      lstm_sequence(4, 33, 40, "tanh", "sigmoid", dc_last=False), rtol=1e-4))
    for act, ract in pairs[:2]:
        cases.append(Case("gru_sequence", f"gru_sequence-threaded-{act}-{ract}",
                          gru_sequence(6, 29, 45, act, ract), rtol=1e-4))

    # Keras masks (T, N, 1) of skipped steps and recurrent dropout masks (N, k u) per gate
    # (positional: a row's keyword arguments reach the backend as they are, not as tensors)
    def step_mask(t, n):
        mask = np.ones((t, n, 1), np.float32)
        mask[1, 0] = mask[t - 1, 1] = mask[0, n - 1] = 0.0
        return mask

    def recurrent_mask(rng, n, width):
        return ((rng.random((n, width)) >= 0.3) / 0.7).astype(np.float32)

    def masked_lstm(t, n, u):
        def build(rng):
            hseq, cseq, gates = out(t, n, u), out(t, n, u), randn(rng, t, n, 4 * u)
            h0, c0, kernel = randn(rng, n, u), randn(rng, n, u), randn(rng, u, 4 * u, scale=0.3)
            masks = (step_mask(t, n), recurrent_mask(rng, n, 4 * u))
            return [call("lstm_forward", hseq, cseq, gates, h0, c0, kernel, "tanh", "sigmoid",
                         *masks),
                    call("lstm_backward", out(t, n, 4 * u), out(u, 4 * u), out(n, u), out(n, u),
                         randn(rng, t, n, u), randn(rng, n, u), gates, cseq, hseq, h0, c0, kernel,
                         "tanh", "sigmoid", *masks)]
        return build

    def masked_gru(t, n, u):
        def build(rng):
            hseq, gates, recs = out(t, n, u), randn(rng, t, n, 3 * u), out(t, n, 3 * u)
            h0, kernel = randn(rng, n, u), randn(rng, u, 3 * u, scale=0.3)
            masks = (step_mask(t, n), recurrent_mask(rng, n, 3 * u))
            return [call("gru_forward", hseq, gates, recs, h0, kernel, randn(rng, 3 * u), "tanh",
                         "sigmoid", *masks),
                    call("gru_backward", out(t, n, 3 * u), out(t, n, 3 * u), out(u, 3 * u),
                         out(n, u), randn(rng, t, n, u), gates, recs, hseq, h0, kernel, "tanh",
                         "sigmoid", *masks)]
        return build

    def masked_simple(t, n, u):
        def build(rng):
            hseq, pre = out(t, n, u), randn(rng, t, n, u)
            h0, kernel = randn(rng, n, u), randn(rng, u, u, scale=0.3)
            masks = (step_mask(t, n), recurrent_mask(rng, n, u))
            return [call("simple_rnn_forward", hseq, pre, h0, kernel, "relu", *masks),
                    call("simple_rnn_backward", out(t, n, u), out(u, u), out(n, u),
                         randn(rng, t, n, u), hseq, h0, kernel, "relu", *masks)]
        return build

    def gru_reset_before(t, n, u, act, ract, masked):
        def build(rng):
            hseq, gates, recs = out(t, n, u), randn(rng, t, n, 3 * u), out(t, n, 3 * u)
            h0, kernel = randn(rng, n, u), randn(rng, u, 3 * u, scale=0.3)
            masks = ((step_mask(t, n), recurrent_mask(rng, n, 3 * u)) if masked
                     else (None, None))
            return [call("gru_reset_before_forward", hseq, gates, recs, h0, kernel, act, ract,
                         *masks),
                    call("gru_reset_before_backward", out(t, n, 3 * u), out(u, 3 * u), out(n, u),
                         randn(rng, t, n, u), gates, recs, hseq, h0, kernel, act, ract,
                         *masks)]
        return build

    cases.append(Case("lstm_sequence", "lstm_sequence-masked-recurrent-dropout",
                      masked_lstm(5, 3, 7), rtol=1e-4))
    cases.append(Case("gru_sequence", "gru_sequence-masked-recurrent-dropout",
                      masked_gru(5, 3, 7), rtol=1e-4))
    cases.append(Case("simple_rnn_sequence", "simple_rnn_sequence-masked-recurrent-dropout",
                      masked_simple(6, 3, 9), rtol=1e-4))
    for act, ract in pairs:   # float32 sums of a linear GRU's growing terms: rtol 5e-4
        cases.append(Case("gru_reset_before", f"gru_reset_before-{act}-{ract}",
                          gru_reset_before(5, 3, 7, act, ract, False), rtol=5e-4))
    cases.append(Case("gru_reset_before", "gru_reset_before-masked-recurrent-dropout",
                      gru_reset_before(5, 3, 7, "tanh", "sigmoid", True), rtol=1e-4))
    return cases


# ------------------------------------------------------------------ larq's quantizers
def quantizer_cases():
    """Every quantizer forward and backward (out aliasing x, dx aliasing dout), on a small and a
    threaded size, with values planted on the edges: 0 (sign maps it to +1), +-clip, +-1, the
    ternary threshold, DoReFa's [0, 1] ends. Rows whose thresholds a float64 reference would
    move (ste_tern, DoReFa's rounding) compare against the float32 reference."""
    from minidl.backends.base import QUANTIZERS
    params = {"ste_sign": (0.0, 1.0), "approx_sign": (0.0, 0.0), "swish_sign": (0.0, 5.0),
              "ste_heaviside": (0.0, 1.0), "ste_tern": (0.05, 1.0), "dorefa_activations": (3.0, 0.0),
              "dorefa_weights": (3.0, 0.0)}

    def build(name, n, variant):
        def make(rng):
            x = randn(rng, n, scale=1.2)
            edges = [0.0, 1.0, -1.0, 0.05, -0.05, 0.5, 2.0, -0.0, 1e-30, 0.7]
            x[:len(edges)] = edges[:n] if n < len(edges) else edges
            forward_param, backward_param = params[name]
            stat = None
            if name == "ste_tern" and variant == "twn":
                stat = np.array([np.abs(x).sum()], np.float32)
            if name == "dorefa_weights":
                stat = np.array([np.abs(x).max()], np.float32)
            if variant == "noclip":
                backward_param = math.inf
            if variant == "nan":
                with_specials(x, stride=7)
            dout, inplace, grad_inplace = randn(rng, n), x.copy(), randn(rng, n)
            return [call("quantize_forward", out(n), x, name, forward_param, stat),
                    call("quantize_backward", out(n), dout, x, name, backward_param, stat),
                    call("quantize_backward", grad_inplace, grad_inplace, x, name, backward_param, stat),
                    call("quantize_forward", inplace, inplace, name, forward_param, stat)]
        return make

    cases = []
    for name in QUANTIZERS:
        ref = "float32" if name in ("ste_tern", "dorefa_activations", "dorefa_weights") else "float64"
        variants = ["plain", "nan"] + (["noclip"] if name in ("ste_sign", "ste_heaviside") else []) + (
            ["twn"] if name == "ste_tern" else [])
        for n in (37, 70001):
            for variant in variants if n == 37 else ["plain"]:
                cases.append(Case("quantize", f"quantize-{name}-{n}-{variant}", build(name, n, variant),
                                  rtol=2e-6, atol=1e-6, ref=ref))
    return cases


# ------------------------------------------------------------------ binary (xnor-popcount) inference
BINARY_CONV_GEOMETRIES = [   # (N, H, W, C), kernel, F, strides, padding, dilation
    ((2, 7, 6, 3), (3, 3), 5, (1, 1), "same", (1, 1)),
    ((1, 5, 5, 32), (3, 3), 17, (1, 1), "same", (1, 1)),
    ((2, 8, 7, 33), (3, 3), 70, (2, 2), "same", (1, 1)),
    ((1, 9, 9, 64), (5, 5), 16, (1, 1), "valid", (1, 1)),
    ((3, 6, 6, 100), (1, 1), 9, (1, 1), "valid", (1, 1)),
    ((1, 9, 8, 40), (3, 3), 65, (1, 1), "same", (2, 2)),
    ((37, 1, 1, 300), (1, 1), 10, (1, 1), "valid", (1, 1)),      # a dense layer
]


def binary_threshold_cases():
    """BatchNormalization + sign folded into a threshold: integer sums z against per-channel
    [lo, hi] (finite, +-inf, empty, z on the bounds), packed as binary_pack_input packs."""
    def build(pixels, c):
        def make(rng):
            k = 40
            z = rng.integers(-k, k + 1, (pixels, c)).astype(np.float32)
            lo = rng.integers(-k, k + 1, c).astype(np.float32)
            hi = np.where(rng.random(c) < 0.5, np.inf, lo + rng.integers(0, 2 * k, c)).astype(np.float32)
            lo[::3] = -np.inf                                    # gamma < 0: +1 at z <= hi
            if c > 4:
                lo[4], hi[4] = 5.0, 4.0                          # gamma == 0 and beta < 0: -1 everywhere
            z[0, :] = lo                                         # on the bounds: +1
            bits = np.full((pixels, -(-c // 32)), -7, np.int32)
            return [call("binary_pack_thresholds", bits, z, np.stack([lo, hi]))]
        return make
    return [Case("binary_pack_thresholds", f"binary_pack_thresholds-{p}x{c}", build(p, c), rtol=0, atol=0,
                 ref="float32") for p, c in ((1, 1), (7, 31), (9, 32), (5, 33), (3, 100), (1200, 96))]


def binary_cases():
    """Packing and the binary convolution: int32 words and integer dot products, exact."""
    def build(in_shape, kernel, filters, strides, padding, dilation, pad_value, use_bias):
        def make(rng):
            x = randn(rng, *in_shape)
            x.flat[:3] = [0.0, -0.0, -1e-30]                  # 0 is +1 (bit 0), -0 too
            w = randn(rng, *kernel, in_shape[3], filters)
            words = -(-in_shape[3] // 32)
            bits = np.full(in_shape[:3] + (words,), -7, np.int32)
            kbits = np.full((kernel[0] * kernel[1] * words, filters), -7, np.int32)
            plan = conv_plan(in_shape, kernel + (in_shape[3], filters), strides, padding, dilation)
            out_shape = window_out_shape(in_shape, kernel, strides, padding, filters, dilation)
            bias = randn(rng, filters) if use_bias else None
            return [call("binary_pack_input", bits, x), call("binary_pack_kernel", kbits, w),
                    call("binary_conv2d_forward", out(*out_shape), bits, kbits, bias, plan, pad_value)]
        return make

    cases = []
    for geometry in BINARY_CONV_GEOMETRIES:
        for pad_value in ((0, 1) if geometry[4] == "same" else (0,)):
            for use_bias in (True, False):
                in_shape, kernel, filters, strides, padding, dilation = geometry
                cases.append(Case("binary_conv2d", "binary_conv2d-" + geometry_id(in_shape, kernel, strides, padding,
                                                                                  filters)
                                  + f"-d{dilation[0]}-pad{pad_value}" + ("" if use_bias else "-nobias"),
                                  build(*geometry, pad_value, use_bias), rtol=0, atol=0, ref="float32"))

    # with pool=: the convolution's max pooling in the same call (the cpu never writes the
    # full-size convolution): windows dropping the last row, in the padding, overlapping, of more
    # pixels than one micro-kernel call takes, a NaN bias (NaN wins), and one split over threads
    def pooled(in_shape, filters, padding, pool, pool_strides, pool_padding, pad_value, nan_bias=False):
        def make(rng):
            x = randn(rng, *in_shape)
            w = randn(rng, 3, 3, in_shape[3], filters)
            words = -(-in_shape[3] // 32)
            bits = np.full(in_shape[:3] + (words,), -7, np.int32)
            kbits = np.full((9 * words, filters), -7, np.int32)
            plan = conv_plan(in_shape, (3, 3, in_shape[3], filters), (1, 1), padding)
            conv_shape = window_out_shape(in_shape, (3, 3), (1, 1), padding, filters)
            pool_shape = window_out_shape(conv_shape, pool, pool_strides, pool_padding)
            bias = randn(rng, filters)
            if nan_bias:
                bias[1] = np.nan
            return [call("binary_pack_input", bits, x), call("binary_pack_kernel", kbits, w),
                    call("binary_conv2d_forward", out(*pool_shape), bits, kbits, bias, plan, pad_value,
                         pool_plan(conv_shape, pool, pool_strides, pool_padding))]
        return make

    for in_shape, filters, padding, pool, pool_strides, pool_padding, pad_value, nan_bias in (
            ((2, 9, 8, 40), 37, "same", (2, 2), (2, 2), "valid", 0, False),
            ((2, 9, 8, 40), 37, "same", (2, 2), (2, 2), "valid", 1, True),
            ((1, 8, 9, 3), 5, "valid", (3, 3), (2, 2), "same", 0, False),
            ((1, 7, 7, 64), 16, "same", (2, 2), (1, 1), "valid", 0, False),
            ((8, 16, 16, 128), 70, "same", (2, 2), (2, 2), "valid", 0, False)):
        cases.append(Case("binary_conv2d", "binary_conv2d-pooled-" + geometry_id(in_shape, (3, 3), (1, 1), padding,
                                                                                 filters)
                          + f"-pool{pool[0]}s{pool_strides[0]}{pool_padding}-pad{pad_value}"
                          + ("-nan" if nan_bias else ""),
                          pooled(in_shape, filters, padding, pool, pool_strides, pool_padding, pad_value, nan_bias),
                          rtol=0, atol=0, ref="float32"))
    return cases


def quantized_cases():
    """The int8 inference ops (the contract's quantized section): exact integer arithmetic, so
    every backend equals the numpy one bit for bit (the float64 numpy backend does not run them:
    their float inputs are float32)."""
    from minidl.quantization.packing import epilogue_arrays, pack, quantize_kernel, weight_scales

    def weights(rng, k, n, out_scale):
        kernel = randn(rng, k, n)
        scales = weight_scales(kernel)
        q = quantize_kernel(kernel, scales)
        offset, mult = epilogue_arrays(q, scales, rng.normal(size=n), 0.02, 17, out_scale)
        return Quantized(pack(q)), Quantized(offset), Quantized(mult)

    def u8(rng, *shape):
        return Quantized(rng.integers(0, 256, size=shape, dtype=np.uint8))

    def quantize(rng):
        x = with_specials(randn(rng, 5, 37, scale=8.0))          # NaN -> zero point, +-inf clamp
        return [call("empty_u8", (5, 37)), call("quantize_u8", Result(0), x, 0.05, 100),
                call("dequantize_u8", out(5, 37), Result(0), 0.05, 100),
                call("quantized_upload", Host(np.arange(-3, 4, dtype=np.int8)))]

    def gemm(m, k, n, out_dtype, relu):
        def build(rng):
            a = u8(rng, m, k)
            w, offset, mult = weights(rng, k, n, 0.05 if out_dtype == np.uint8 else None)
            result = Quantized(np.zeros((m, n), np.uint8)) if out_dtype == np.uint8 else out(m, n)
            return [call("qgemm_forward", result, a, w, offset, mult, 9 if out_dtype == np.uint8 else 0, relu)]
        return build

    def conv(in_shape, kernel, filters, strides, padding):
        def build(rng):
            plan = conv_plan(in_shape, kernel + (in_shape[3], filters), strides, padding)
            w, offset, mult = weights(rng, kernel[0] * kernel[1] * in_shape[3], filters, 0.05)
            out_shape = window_out_shape(in_shape, kernel, strides, padding, filters)
            return [call("qconv2d_forward", Quantized(np.zeros(out_shape, np.uint8)), u8(rng, *in_shape), w, offset,
                         mult, 5, True, 40, plan)]
        return build

    def pool(rng):
        plan = pool_plan((2, 7, 7, 5), (3, 3), (2, 2), "same")
        return [call("max_pool2d_u8", Quantized(np.zeros((2, 4, 4, 5), np.uint8)), u8(rng, 2, 7, 7, 5), plan)]

    def add(n, relu):
        def build(rng):
            return [call("add_u8", Quantized(np.zeros(n, np.uint8)), u8(rng, n), u8(rng, n), 12, 200,
                         int(0.7 * 2 ** 20), int(-0.4 * 2 ** 20), 30, relu)]
        return build

    def path(rng):
        def check(get, backend):
            assert isinstance(get(Result(0)), str) and get(Result(0))
        return [call("quantized_path")], check

    exact = {"rtol": 0, "atol": 0, "ref": "float32"}
    cases = [Case("quantize_u8", "quantize_u8-nan", quantize, **exact),
             Case("quantized_path", "quantized_path", path, ref=None),
             Case("max_pool2d_u8", "max_pool2d_u8-2x7x7x5", pool, **exact)]
    for m, k, n in ((1, 3, 5), (33, 100, 37), (64, 288, 64)):
        for out_dtype, relu in ((np.uint8, True), (np.float32, False)):
            cases.append(Case("qgemm", f"qgemm-{m}x{k}x{n}-{np.dtype(out_dtype).name}" + ("-relu" if relu else ""),
                              gemm(m, k, n, out_dtype, relu), **exact))
    for geometry in (((2, 9, 9, 3), (3, 3), 16, (1, 1), "same"), ((3, 8, 7, 5), (3, 2), 7, (2, 1), "valid")):
        in_shape, kernel, filters, strides, padding = geometry
        cases.append(Case("qconv2d", "qconv2d-" + geometry_id(in_shape, kernel, strides, padding, filters),
                          conv(*geometry), **exact))
    cases += [Case("add_u8", f"add_u8-{n}" + ("-relu" if relu else ""), add(n, relu), **exact)
              for n, relu in ((37, False), (70001, True))]
    return cases


def attention_case(batch, tq, tk, heads, dim, dim_v, causal, masked, dropped):
    def build(rng):
        q, k = randn(rng, batch, tq, heads, dim), randn(rng, batch, tk, heads, dim)
        v, dout = randn(rng, batch, tk, heads, dim_v), randn(rng, batch, tq, heads, dim_v)
        mask = (rng.random((batch, tq, tk)) > 0.3).astype(np.float32) if masked else None
        if masked:
            mask[0, 0] = 0                      # a query that may attend nothing: uniform
        drop = ((rng.random((batch, heads, tq, tk)) > 0.2) / 0.8).astype(np.float32) if dropped else None
        probs = out(batch, heads, tq, tk)
        return [call("attention_forward", out(batch, tq, heads, dim_v), probs, q, k, v, mask, drop, 0.37,
                     causal),
                call("attention_backward", out(*q.shape), out(*k.shape), out(*v.shape), dout, q, k, v, probs,
                     mask, drop, 0.37, causal)]
    name = "x".join(map(str, (batch, tq, tk, heads, dim, dim_v)))
    flags = "".join(f for f, on in (("-causal", causal), ("-mask", masked), ("-dropout", dropped)) if on)
    return Case("attention", f"attention-{name}{flags}", build, rtol=1e-4, atol=1e-5)


def attention_cases():
    return [attention_case(2, 5, 7, 3, 4, 3, False, False, False),
            attention_case(2, 9, 9, 2, 16, 8, True, True, True),
            attention_case(1, 33, 20, 1, 64, 64, True, False, False),
            attention_case(3, 6, 17, 4, 5, 2, False, True, False)]


CASES = (memory_cases() + elementwise_cases() + activation_cases() + gemm_cases() + conv_cases()
         + precision_cases()
         + depthwise_cases() + dilated_grouped_cases() + conv_transpose_cases() + upsample_cases()
         + pool_cases()
         + layout_cases() + batchnorm_cases() + layernorm_cases() + layer_op_cases()
         + dropout_cases() + image_cases() + image_mix_cases() + equalize_cases() + loss_cases() + row_loss_cases()
         + metric_cases() + optimizer_cases() + tensor_op_cases() + recurrent_cases()
         + quantizer_cases() + binary_cases() + binary_threshold_cases()
         + attention_cases() + quantized_cases())
GEMM_FAMILY_OPS = ("gemm", "conv2d", "conv2d_transpose")   # the rows that run through the opencl GEMM kernels


# ------------------------------------------------------------------ running a row
_built, _references = {}, {}


def build_calls(case):
    """(calls, check) of a row, built once: every backend variant gets the same inputs."""
    if case.id not in _built:
        built = case.build(np.random.default_rng(zlib.crc32(case.id.encode())))
        _built[case.id] = built if isinstance(built, tuple) else (built, None)
    return _built[case.id]


def reference(case, calls):
    """The reference's get() for a row, computed once per row."""
    if case.id not in _references:
        _references[case.id] = run_calls(NumpyBackend(case.ref), calls)
    return _references[case.id]


def run_calls(backend, calls):
    """Run `calls` on `backend`; returns get(template or Result) -> its final host value."""
    tensors, plans, results = {}, {}, []

    def resolve(arg):
        if isinstance(arg, (np.ndarray, Opaque, Quantized)):
            key = id(arg)
            if key not in tensors:
                array = arg if isinstance(arg, np.ndarray) else arg.array
                tensors[key] = (arg, backend.quantized_upload(array) if isinstance(arg, Quantized)
                                else backend.from_numpy(array, dtype=array.dtype))
            return tensors[key][1]
        if isinstance(arg, Host):
            return arg.array.copy()
        if isinstance(arg, list):
            return [resolve(a) for a in arg]
        if isinstance(arg, Plan):
            if id(arg) not in plans:
                plans[id(arg)] = getattr(backend, arg.builder)(*arg.args)
            return plans[id(arg)]
        if isinstance(arg, Result):
            return results[arg.index]
        return arg

    with np.errstate(all="ignore"):           # NaN rows make numpy warn on the host backends
        for c in calls:
            results.append(getattr(backend, c.op)(*map(resolve, c.args), **c.kwargs))

    def get(template):
        if isinstance(template, Result):
            value = results[template.index]
        else:
            value = tensors[id(template)][1]
        if isinstance(value, PackedGemmB):     # backend-defined: checked through gemm_packed
            return None
        if value is None or isinstance(value, (tuple, dict, str, np.ndarray)):
            return np.array(value, copy=True) if isinstance(value, np.ndarray) else value
        return backend.to_numpy(value)

    return get, tensors, results


def assert_matches(got, want, rtol, atol, what):
    if not isinstance(want, np.ndarray):
        assert got == want, what
        return
    if want.dtype in (np.uint8, np.int8):     # the int8 ops are exact on every backend
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    expected_dtype = np.int32 if want.dtype.kind in "iu" else np.float32
    assert got.dtype == expected_dtype, f"{what}: dtype {got.dtype}, expected {np.dtype(expected_dtype)}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    want = want.astype(expected_dtype)        # the float64 answer, correctly rounded to float32
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.abs(want)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    # NaN where the reference has NaN, the same infinities, the values elsewhere within tolerance
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=what)


def describe(c):
    """op(shapes and scalars) of a call, for failure messages."""
    def show(a):
        if isinstance(a, (np.ndarray, Opaque, Host, Quantized)):
            return "x".join(map(str, getattr(a, "array", a).shape)) or "scalar"
        if isinstance(a, list):
            return "[" + ", ".join(map(show, a)) + "]"
        return type(a).__name__ if isinstance(a, (Plan, Result)) else repr(a)
    args = [show(a) for a in c.args] + [f"{k}={v!r}" for k, v in c.kwargs.items()]
    return f"{c.op}({', '.join(args)})"


def check_case(backend, case):
    if case.ref is not None and backend.name == "numpy" and backend.dtype == case.ref:
        pytest.skip(f"the {case.ref} numpy backend is this row's reference")
    calls, check = build_calls(case)
    get, tensors, results = run_calls(backend, calls)
    if case.ref is None:
        check(get, backend)
        return
    want_get, want_tensors, want_results = reference(case, calls)
    for key, (template, _) in want_tensors.items():
        if isinstance(template, Opaque):
            continue
        where = next(f"call {i} {describe(c)} argument {j}" for i, c in enumerate(calls)
                     for j, a in enumerate(c.args) if a is template or (isinstance(a, list) and
                                                                         any(t is template for t in a)))
        assert_matches(get(template), want_get(template), case.rtol, case.atol, f"{case.id}: {where}")
    for index, value in enumerate(want_results):
        if value is not None:
            assert_matches(get(Result(index)), want_get(Result(index)), case.rtol, case.atol,
                           f"{case.id}: the result of call {index} {describe(calls[index])}")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_op(backend, case):
    check_case(backend, case)


GEMM_FAMILY_CASES = [case for case in CASES if case.op in GEMM_FAMILY_OPS]


@pytest.mark.parametrize("case", GEMM_FAMILY_CASES, ids=[case.id for case in GEMM_FAMILY_CASES])
def test_gemm_op_on_the_tiled_opencl_family(opencl_tiled, case):
    check_case(opencl_tiled, case)


# ------------------------------------------------------------------ the table itself
def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_contract_op_has_a_row():
    contract = {name for name, _ in inspect.getmembers(Backend, inspect.isfunction) if not name.startswith("_")}
    covered = set()
    for case in CASES:
        calls, _ = build_calls(case)
        for c in calls:
            covered.add(c.op)
            covered.update(a.builder for a in c.args if isinstance(a, Plan))
    assert contract - covered == set(), "ops of minidl/backends/base.py without a row in CASES"
    with_specials_rows = {c.op for c in CASES if c.id.endswith("-nan")}
    assert with_specials_rows >= {"add", "axpby", "multiply", "bias_add", "activation", "gemm", "conv2d",
                                  "max_pool2d", "avg_pool2d", "global_avg_pool", "pad2d", "concat",
                                  "depthwise_conv2d", "batchnorm", "layernorm", "prelu", "channel_mask", "gaussian_noise",
                                  "transpose", "dropout", "softmax_cross_entropy", "sigmoid_cross_entropy",
                                  "cross_entropy", "mean_squared_error", "row_loss", "sum", "accuracy",
                                  "clip_by_value", "clip_by_norm", "sgd_update", "adam_update",
                                  "rmsprop_update", "adagrad_update", "adadelta_update", "adamax_update",
                                  "amsgrad_update", "nadam_update", "lion_update", "ftrl_update", "ema_update",
                                  "bop_update",
                                  "clip_by_global_norm", "l1_l2", "norm_constraint", "unary", "binary",
                                  "where", "reduce"}
