"""Global-memory traffic of the GPU profile's kernels, from their tiling: bytes loaded and flops.

For benchmarks (bytes per flop at a model's shapes) and tests; nothing here runs a kernel.
`params` is a tiled parameter set (gemm.TILED_DEFAULT, a tuned one); `shapes` is
  "gemm"                    {"m", "n", "k"} and optionally "beta" (nonzero: C is read too)
  "conv2d_forward",         a Window2D plan (minidl.backends.base), or {"plan", "bias"}
  "conv2d_backward_data",
  "conv2d_backward_filter"
  "column_sum"              {"m", "c"}: a bias gradient or a BatchNorm statistic over x (m, c)
  "sum"                     {"n"}: a whole-tensor reduction (sum, metric counts, all_finite)

The tiled product of an (M, N, K) GEMM (kernels/tile_body.cl) loads each element of op(A) once
per tile column, ceil(N / TSN) times, and each element of op(B) once per tile row, ceil(M /
TSM) times: 4 K (M ceil(N / TSN) + N ceil(M / TSM)) bytes for 2 M N K flops, so about
2 (TSM + TSN) / (TSM TSN) bytes per flop when M, N are multiples of the tile (1/16 at 64 x 64)
and no better than 2 / N for a product only N columns wide (a 32-filter convolution: 1/16 at
best, whatever the tile). The convolutions are such products (implicit: the patch matrix is
read from x tile by tile, never stored); loads that fall in the zero padding are counted as
made (an upper bound). Flops are the useful ones, 2 N OH OW KH KW C F for each convolution op.

That is the fallback ("gemm" algorithm). The GPU profile runs the direct tiled convolutions
where they fit (conv_direct.py; "direct"): each work-group stages its pixel tile's input patch
with the halo once for all taps, so the input is loaded about once per filter tile (the halo
and the rows a ragged edge tile does not need aside: conv_direct.patch_loads counts exactly the
elements STAGE_PATCH loads) and the filters once per pixel tile, ~2 / (TOH TOW) bytes per flop;
the filter gradient loads x once per filter tile and dout once per channel chunk.
`algorithm` says which of the two a call runs, as conv.py decides it.
"""

import math

from . import conv_direct
from .conv import flipped_plan
from .gemm import split_k_slices, tile_for

FLOAT = 4  # bytes


def _cdiv(a, b):
    return -(-a // b)


def _plan_of(shapes):
    return (shapes["plan"], bool(shapes.get("bias"))) if isinstance(shapes, dict) else (shapes, False)


def product_shape(kind, shapes):
    """(M, N, K) of the tiled product that kernel family `kind` computes at `shapes`."""
    if kind == "gemm":
        return shapes["m"], shapes["n"], shapes["k"]
    plan, _ = _plan_of(shapes)
    taps = plan.kh * plan.kw
    pixels_out = plan.n * plan.oh * plan.ow
    if kind == "conv2d_forward":
        return pixels_out, plan.oc, taps * plan.c
    if kind == "conv2d_backward_data":
        return plan.n * plan.h * plan.w, plan.c, taps * plan.oc
    if kind == "conv2d_backward_filter":
        return taps * plan.c, plan.oc, pixels_out
    raise ValueError(f"traffic: unknown kernel family {kind!r}")


def flops(kind, shapes):
    """Useful floating-point operations of one call (a multiply-add counts two)."""
    if kind == "column_sum":
        return shapes["m"] * shapes["c"]
    if kind == "sum":
        return shapes["n"]
    if kind == "gemm":
        m, n, k = product_shape(kind, shapes)
        return 2 * m * n * k
    plan, _ = _plan_of(shapes)
    return 2 * plan.n * plan.oh * plan.ow * plan.kh * plan.kw * plan.c * plan.oc


def tile_bytes(m, n, k, params):
    """Bytes of op(A) and op(B) that the tiled product of an (m, n, k) GEMM loads, with the
    tile the kernels use for an m x n product (gemm.tile_for)."""
    params = tile_for(params, m, n)
    return FLOAT * k * (m * _cdiv(n, params["TSN"]) + n * _cdiv(m, params["TSM"]))


def direct_defines(kind, shapes, params, local_limit=math.inf):
    """The direct kernel's defines for a convolution call (None where conv.py runs the
    implicit-GEMM tiles: the input gradient of a strided convolution, or a work-group larger
    than local_limit bytes) and the geometry it runs at (the flipped one for an input gradient)."""
    plan, _ = _plan_of(shapes)
    conv = conv_direct.conv_params(params)
    if kind == "conv2d_backward_data":
        if plan.sh != 1 or plan.sw != 1:
            return None, plan
        plan = flipped_plan(plan)
        return conv_direct.kernel_defines(conv, plan, flip=True, local_limit=local_limit), plan
    filter_grad = kind == "conv2d_backward_filter"
    return conv_direct.kernel_defines(conv, plan, filter_grad, local_limit=local_limit), plan


def algorithm(kind, shapes, params):
    """"direct" or "gemm": which kernels a convolution call runs on the GPU profile (the
    device's limits aside); "gemm" for every other kind."""
    if kind not in ("conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"):
        return "gemm"
    return "gemm" if direct_defines(kind, shapes, params)[0] is None else "direct"


def bytes_loaded(kind, shapes, params, algorithm_name=None):
    """Global-memory bytes one call loads (stores are not counted), with the kernels
    `algorithm_name` names (default: those the GPU profile runs, `algorithm`)."""
    # group_ops imports pyopencl: only these two families need it
    if kind == "column_sum":   # x once, then the (groups, c) partials once (group_ops.ROW_GROUPS)
        from .group_ops import ROW_GROUPS
        m, c = shapes["m"], shapes["c"]
        return FLOAT * (m * c + min(ROW_GROUPS, m) * c)
    if kind == "sum":
        from .group_ops import WHOLE_GROUPS
        return FLOAT * (shapes["n"] + WHOLE_GROUPS)
    m, n, k = product_shape(kind, shapes)
    if (algorithm_name or algorithm(kind, shapes, params)) == "direct":
        _, bias = _plan_of(shapes)
        defines, plan = direct_defines(kind, shapes, params)
        loaded = conv_direct.direct_loads(defines, plan, kind == "conv2d_backward_filter")
        return FLOAT * (loaded + (m * n if bias and kind == "conv2d_forward" else 0))
    loaded = tile_bytes(m, n, k, params)
    if kind == "gemm":
        tile = tile_for(params, m, n)
        slices = split_k_slices(_cdiv(m, tile["TSM"]) * _cdiv(n, tile["TSN"]), k)
        partial = m * n * slices if slices > 1 else 0   # gemm_sum_slices reads them back
        return loaded + FLOAT * (partial + (m * n if shapes.get("beta") else 0))
    _, bias = _plan_of(shapes)
    if kind == "conv2d_forward":
        return loaded + (FLOAT * m * n if bias else 0)   # one bias read per result
    if kind == "conv2d_backward_filter":
        tile = tile_for(params, m, n)
        slices = split_k_slices(_cdiv(m, tile["TSM"]) * _cdiv(n, tile["TSN"]), k)
        return loaded + (FLOAT * m * n * slices if slices > 1 else 0)
    return loaded


def bytes_per_flop(kind, shapes, params, algorithm_name=None):
    """bytes_loaded / flops (math.inf for a call of no flops)."""
    work = flops(kind, shapes)
    return bytes_loaded(kind, shapes, params, algorithm_name) / work if work else math.inf


def compulsory_bytes(kind, shapes):
    """Bytes any kernel must load: each operand once (a bound no tiling beats)."""
    if kind in ("column_sum", "sum"):
        return bytes_loaded(kind, shapes, None)
    if kind == "gemm":
        m, n, k = product_shape(kind, shapes)
        return FLOAT * (m * k + k * n + (m * n if shapes.get("beta") else 0))
    plan, bias = _plan_of(shapes)
    x, out, w = plan.n * plan.h * plan.w * plan.c, plan.n * plan.oh * plan.ow * plan.oc, \
        plan.kh * plan.kw * plan.c * plan.oc
    operands = {"conv2d_forward": x + w + (plan.oc if bias else 0),
                "conv2d_backward_data": out + w, "conv2d_backward_filter": x + out}
    return FLOAT * operands[kind]
