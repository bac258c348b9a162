"""The GPU profile's direct tiled convolutions (kernels/conv_direct.cl, conv_direct_filter.cl):
their parameter sets, the per-layer kernel shapes (defines) checked against the device, the
launches, and the loads each kernel makes (for traffic.py).

A parameter set is a plain dict, stored by the tuner beside the GEMM's (params["conv"]):
  {"TOH": 8, "TOW": 8, "TF": 64, "CK": 8, "WPP": 4, "WPF": 4}
a work-group's TOH x TOW output pixels x TF filters, CK input channels staged per step, each
work-item WPP pixels x WPF filters (kernels/conv_patch.cl, conv_direct.cl document them). The
filter gradient uses the same pixel tile and filters, each work-item WPQ (tap, channel) rows.
params["conv"] = False runs the implicit-GEMM tiles for every convolution (tests use it to
reach them; a device where they win can be given it).
Where the shapes do not fit the device (local memory, work-group size) even with fewer channels
per step, `None` is returned and conv.py runs the implicit-GEMM tiles (conv_tiled.cl) instead.
Nothing here imports pyopencl: traffic.py computes from it on any machine.
"""

import math

# 256 work-items, 64 pixels x 64 filters: 2 / 64 bytes per flop for the filters, the patch's
# share ~1/16 of that (traffic.py); 4 * (800 + 9 * 8 * 65) = 22 KB of local memory at 3 x 3
CONV_DEFAULT = {"TOH": 8, "TOW": 8, "TF": 64, "CK": 8, "WPP": 4, "WPF": 4}
CONV_KEYS = ("TOH", "TOW", "TF", "CK", "WPP", "WPF")
MAX_WPQ = 16              # the filter gradient's (tap, channel) rows per work-item, at most
SLICE_GROUPS = 256        # the filter gradient is split until it has about this many work-groups
MIN_SLICE_POSITIONS = 4   # ... each slice walking at least this many pixel tiles
FORWARD_KERNEL = ("conv_direct.cl", "conv2d_direct")
FILTER_KERNEL = ("conv_direct_filter.cl", "conv2d_backward_filter_direct")


def conv_params(gemm_params):
    """The direct convolutions' parameter set that goes with a tiled GEMM parameter set (its
    "conv" entry, else CONV_DEFAULT), or None where that entry is False (no direct kernels)."""
    value = gemm_params.get("conv", CONV_DEFAULT)
    if value is False:
        return None
    check_conv_params(value)
    return dict(value)


def check_conv_params(params):
    """Raise ValueError when a parameter set is malformed (the device limits are checked per layer)."""
    if not isinstance(params, dict) or any(not isinstance(params.get(k), int) or params[k] < 1
                                           for k in CONV_KEYS):
        raise ValueError(f"conv params {params}: {', '.join(CONV_KEYS)} must be positive integers")
    if params["TF"] % params["WPF"] or (params["TOH"] * params["TOW"]) % params["WPP"]:
        raise ValueError(f"conv params {params}: WPF must divide TF and WPP TOH * TOW")


def layer_tile(params, filters, out_w):
    """`params` for a layer of `filters` filters and output width out_w: for a layer at most half
    a tile wide in filters, half as many filters and twice as many pixel columns per tile (the
    same work-items), while the output is wider than the tile."""
    tile = dict(params)
    while (filters <= tile["TF"] // 2 and (tile["TF"] // 2) % tile["WPF"] == 0
           and out_w > tile["TOW"]):
        tile["TF"] //= 2
        tile["TOW"] *= 2
    return tile


def _threads(tile):
    return (tile["TF"] // tile["WPF"]) * (tile["TOH"] * tile["TOW"] // tile["WPP"])


def fit_threads(tile, group_limit):
    """`tile` with its register blocks grown (fewer work-items, the same tile) until a
    work-group has at most group_limit work-items (None if even one pixel tile cannot)."""
    tile = dict(tile)
    while _threads(tile) > group_limit:
        pixels = tile["TOH"] * tile["TOW"]
        if pixels % (2 * tile["WPP"]) == 0 and tile["WPP"] <= tile["WPF"]:
            tile["WPP"] *= 2
        elif tile["TF"] % (2 * tile["WPF"]) == 0:
            tile["WPF"] *= 2
        elif pixels % (2 * tile["WPP"]) == 0:
            tile["WPP"] *= 2
        else:
            return None
    return tile


def _patch_floats(d):
    return ((d["TOH"] - 1) * d["SH"] + d["KH"]) * ((d["TOW"] - 1) * d["SW"] + d["KW"]) * d["CK"]


def local_bytes(defines, filter_grad=False):
    """Local memory of one work-group of conv_direct.cl (or conv_direct_filter.cl)."""
    if filter_grad:
        return 4 * (_patch_floats(defines) + defines["TOH"] * defines["TOW"] * defines["TF"])
    return 4 * (_patch_floats(defines) + defines["KH"] * defines["KW"] * defines["CK"] * (defines["TF"] + 1))


def local_size(defines, filter_grad=False):
    """The work-group size the kernel requires (its reqd_work_group_size)."""
    rtf = defines["TF"] // defines["WPF"]
    if filter_grad:
        return (rtf, -(-defines["KH"] * defines["KW"] * defines["CK"] // defines["WPQ"]), 1)
    return (rtf, defines["TOH"] * defines["TOW"] // defines["WPP"], 1)


def kernel_defines(params, plan, filter_grad=False, flip=False,
                   local_limit=math.inf, group_limit=math.inf):
    """The -D defines of the direct kernel for `plan` (a Window2D: for flip, the flipped
    convolution's), CK lowered until the work-group fits local_limit bytes; None when nothing
    fits or params is None (conv_params of a set without direct kernels)."""
    if params is None:
        return None
    tile = fit_threads(layer_tile(params, plan.oc, plan.ow), group_limit)
    if tile is None:
        return None
    threads = _threads(tile)
    defines = {k: tile[k] for k in ("TOH", "TOW", "TF", "WPF")}
    defines.update(KH=plan.kh, KW=plan.kw, SH=plan.sh, SW=plan.sw, CK=min(tile["CK"], plan.c))
    if not filter_grad:
        defines.update(WPP=tile["WPP"], FLIP=int(flip))
    while True:
        if filter_grad:   # about as many work-items as the forward pass's
            rtf = defines["TF"] // defines["WPF"]
            defines["WPQ"] = -(-plan.kh * plan.kw * defines["CK"] * rtf // threads)
        fits = (local_bytes(defines, filter_grad) <= local_limit
                and math.prod(local_size(defines, filter_grad)) <= group_limit
                and defines.get("WPQ", 1) <= MAX_WPQ)
        if fits:
            return defines
        if defines["CK"] == 1:
            return None
        defines["CK"] = -(-defines["CK"] // 2)


def fitting_defines(rt, params, plan, filter_grad=False, flip=False):
    """kernel_defines within the limits of runtime `rt`'s device and of the built kernel
    (registers may hold a GPU kernel under the device's work-group limit); None where none fit."""
    defines = kernel_defines(params, plan, filter_grad, flip, rt.local_mem_size,
                             rt.max_work_group_size)
    if defines is None:
        return None
    kernel = rt.kernel(*(FILTER_KERNEL if filter_grad else FORWARD_KERNEL), defines)
    if rt.kernel_max_group(kernel) < math.prod(local_size(defines, filter_grad)):
        return None
    return defines


def tiles_of(defines, plan):
    """(tiles along y, tiles along x) of the output pixels."""
    return -(-plan.oh // defines["TOH"]), -(-plan.ow // defines["TOW"])


def filter_slices(defines, plan):
    """Split-K slices of the filter gradient and pixel tiles per slice."""
    ty, tx = tiles_of(defines, plan)
    positions = plan.n * ty * tx
    groups = -(-plan.oc // defines["TF"]) * -(-plan.c // defines["CK"])
    slices = max(1, min(positions // MIN_SLICE_POSITIONS, -(-SLICE_GROUPS // groups)))
    per_slice = -(-positions // slices)
    return -(-positions // per_slice), per_slice


# ----------------------------------------------------------------------- traffic
def _axis_loads(size, out_size, tile, stride, kernel, pad):
    """The patch rows (or columns) the kernels load along one axis, summed over the tiles:
    those the tile's valid pixels read, inside the input, skipping what a stride larger than
    the kernel leaves out (conv_patch.cl's STAGE_PATCH rule)."""
    total = 0
    for o0 in range(0, out_size, tile):
        needed = (min(tile, out_size - o0) - 1) * stride + kernel
        start = o0 * stride - pad
        total += sum(1 for r in range(needed)
                     if 0 <= start + r < size and (stride <= kernel or r % stride < kernel))
    return total


def patch_loads(defines, plan):
    """Input elements that staging the patches loads: every channel of the patches, once per
    filter tile (in the filter gradient each work-group stages its CK channels of them)."""
    rows = _axis_loads(plan.h, plan.oh, defines["TOH"], plan.sh, plan.kh, plan.pad_top)
    cols = _axis_loads(plan.w, plan.ow, defines["TOW"], plan.sw, plan.kw, plan.pad_left)
    return plan.n * rows * cols * plan.c * -(-plan.oc // defines["TF"])


def direct_loads(defines, plan, filter_grad=False):
    """Floats the direct kernel loads for `plan`: patches, then the filters (forward: every
    tile loads the TAPS x C x F filters it uses) or dout (filter gradient: every channel chunk
    loads all of it) and the split-K partial sums read back. The bias is counted by the caller."""
    loads = patch_loads(defines, plan)
    ty, tx = tiles_of(defines, plan)
    if not filter_grad:
        return loads + plan.n * ty * tx * plan.kh * plan.kw * plan.c * plan.oc
    loads += -(-plan.c // defines["CK"]) * plan.n * plan.oh * plan.ow * plan.oc
    slices, _ = filter_slices(defines, plan)
    return loads + (slices * plan.kh * plan.kw * plan.c * plan.oc if slices > 1 else 0)


# ------------------------------------------------------------------------ launches
def forward(backend, out, x, weight, bias, plan, defines):
    """out (N, OH, OW, F) = conv(x, weight (KH, KW, C, F)) + bias (F,) or None; with
    defines["FLIP"], dx of a stride-1 convolution: x is dout, `plan` the flipped geometry."""
    kernel = backend.rt.kernel(*FORWARD_KERNEL, defines)
    ty, tx = tiles_of(defines, plan)
    local = local_size(defines)
    groups = (-(-plan.oc // defines["TF"]), ty * tx, plan.n)
    backend.rt.launch(kernel, tuple(g * l for g, l in zip(groups, local)), local,
                      out, x, weight, weight if bias is None else bias, int(bias is not None),
                      plan.h, plan.w, plan.c, plan.oh, plan.ow, plan.pad_top, plan.pad_left,
                      plan.oc, tx)


def backward_filter(backend, dweight, dout, x, plan, defines):
    """dweight (KH, KW, C, F) from dout (N, OH, OW, F) and x (N, H, W, C), in split-K slices."""
    engine = backend.gemm_engine
    kernel = backend.rt.kernel(*FILTER_KERNEL, defines)
    ty, tx = tiles_of(defines, plan)
    slices, per_slice = filter_slices(defines, plan)
    size = plan.kh * plan.kw * plan.c * plan.oc
    target = dweight if slices == 1 else engine.scratch("split_k", slices * size)
    local = local_size(defines, filter_grad=True)
    groups = (-(-plan.oc // defines["TF"]), -(-plan.c // defines["CK"]), slices)
    backend.rt.launch(kernel, tuple(g * l for g, l in zip(groups, local)), local,
                      target, dout, x, plan.h, plan.w, plan.c, plan.oh, plan.ow, plan.pad_top,
                      plan.pad_left, plan.oc, tx, ty * tx, plan.n * ty * tx, per_slice, size)
    if slices > 1:
        engine.sum_slices(dweight, target, slices, size, 1.0, 0.0)
