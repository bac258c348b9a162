"""Global-memory bytes loaded per FLOP by the opencl backend's GPU-profile kernels at keras_cnn's
shapes, computed from the kernels' tiling (no device needed):

    python benchmarks/opencl_traffic.py [--batch 32]

On a GPU the arithmetic units outrun global memory by ~10-20x (an H200: ~60 TFLOP/s of float32
against ~4.8 TB/s, ~1/12 byte per FLOP), so a kernel is compute-bound only when it loads at most
~1/16 byte per FLOP from global memory; caches aside, the tiling decides that. For every GEMM of
a keras_cnn training step (the Dense layers, and each convolution's three products as implicit
GEMMs: forward, input gradient, filter gradient) it prints the bytes the tiled kernel loads
(kernels/gemm_tiled.cl: a TSM x TSN tile of C per work-group, loading a TSK-deep slice of op(A)
and of B per step, only the elements inside the matrices) per FLOP, and the same for a kernel
with one row of C per work-item (each work-item loads its row of A and all of B), the layout of
a CPU kernel run on a GPU. It exits non-zero when a tiled product loads more than 1/16 byte per
FLOP at a shape where every dimension is at least the tile's.

The bytes come from minidl/backends/opencl/traffic.py (the kernels' own formulas) when it
exists, else from the formula here, written from the kernels' tunables (gemm.TILED_DEFAULT):
each of the ceil(m / TSM) x ceil(n / TSN) work-groups loads its rows of op(A) and its columns of
B over all k, the convolutions being tiled implicit GEMMs over the patch matrix (never stored).
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from minidl.backends.opencl.gemm import TILED_DEFAULT  # noqa: E402

try:   # the kernels' own formulas (tile reshaping for narrow products included), where present
    from minidl.backends.opencl import traffic
except ImportError:
    traffic = None

FLOAT_BYTES = 4
LIMIT = 1 / 16


def tiled_bytes(m, n, k, params=TILED_DEFAULT):
    """Bytes gemm_tiled loads for C (m, n) = op(A) (m, k) @ B (k, n): each of the
    ceil(m / TSM) x ceil(n / TSN) work-groups loads its rows of op(A) and its columns of B over
    all k (masked loads of a ragged tile read nothing)."""
    tile_rows, tile_cols = math.ceil(m / params["TSM"]), math.ceil(n / params["TSN"])
    return FLOAT_BYTES * k * (m * tile_cols + n * tile_rows)


def row_per_item_bytes(m, n, k):
    """Bytes a kernel with one row of C per work-item loads: its row of A and all of B."""
    return FLOAT_BYTES * m * (k + k * n)


def keras_cnn_products(batch):
    """(layer, pass, kind, shapes, (m, n, k)) of every product of a keras_cnn training step at
    32x32x3 inputs: traffic.py's kinds and shapes, and the tiled product each one is (a
    convolution's as an implicit GEMM: forward (pixels out, filters, taps x channels), input
    gradient (pixels in, channels, taps x filters), filter gradient (taps x channels, filters,
    pixels out))."""
    from minidl.backends.numpy_backend import NumpyBackend
    planner = NumpyBackend()
    products = []
    h = w = 32
    channels = 3
    for index, layer in enumerate(((32, "same"), (32, "valid"), None,
                                   (64, "same"), (64, "valid"), None)):
        if layer is None:   # 2x2 max pooling
            h, w = h // 2, w // 2
            continue
        filters, padding = layer
        plan = planner.conv2d_plan((batch, h, w, channels), (3, 3, channels, filters), (1, 1), padding)
        name = f"conv{index + 1} {h}x{w}x{channels}->{filters}"
        taps, out_pixels = 9, batch * plan.oh * plan.ow
        products.append((name, "forward", "conv2d_forward", plan,
                         (out_pixels, filters, taps * channels)))
        if index:   # the first layer needs no input gradient
            products.append((name, "input grad", "conv2d_backward_data", plan,
                             (batch * h * w, channels, taps * filters)))
        products.append((name, "filter grad", "conv2d_backward_filter", plan,
                         (taps * channels, filters, out_pixels)))
        h, w, channels = plan.oh, plan.ow, filters
    flat = h * w * channels
    for name, fan_in, units in (("dense 2304->512", flat, 512), ("dense 512->10", 512, 10)):
        for which, (m, n, k) in (("forward", (batch, units, fan_in)), ("input grad", (batch, fan_in, units)),
                                 ("filter grad", (fan_in, units, batch))):
            products.append((name, which, "gemm", {"m": m, "n": n, "k": k}, (m, n, k)))
    return products


def flops_of(kind, plan, mnk):
    """Useful flops: 2 m n k, or for a convolution 2 N OH OW KH KW C F (traffic.py's count)."""
    if kind == "gemm":
        return 2 * math.prod(mnk)
    return 2 * plan.n * plan.oh * plan.ow * plan.kh * plan.kw * plan.c * plan.oc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--tiles", default=None, metavar="TSMxTSN",
                        help="C tile of a work-group (default gemm.TILED_DEFAULT's)")
    args = parser.parse_args(argv)
    p = dict(TILED_DEFAULT)
    if args.tiles:
        p["TSM"], p["TSN"] = (int(v) for v in args.tiles.lower().split("x"))
    if traffic is None:
        return legacy_table(args.batch, p)
    conv = traffic.conv_direct.conv_params(p)
    print(f"GEMM tiles TSM={p['TSM']} TSN={p['TSN']} TSK={p['TSK']}; direct convolution tiles "
          f"{conv['TOH']}x{conv['TOW']} pixels x {conv['TF']} filters, {conv['CK']} channels per "
          f"step; limit {LIMIT:.4f} B/FLOP; batch {args.batch}")
    print("kernel: direct (conv_direct*.cl, the input patch staged once for all taps) or gemm "
          "(tiled GEMM / implicit-GEMM conv_tiled.cl); 'implicit GEMM': what conv_tiled.cl would "
          "load; 'compulsory': every operand loaded once")
    print(f"{'layer':<22} {'pass':<12} {'m x n x k':>18} {'kernel':>7} {'B/FLOP':>8} "
          f"{'implicit GEMM':>14} {'compulsory':>11} {'row/item':>9}")
    over = []
    for layer, which, kind, shapes, (m, n, k) in keras_cnn_products(args.batch):
        flops = flops_of(kind, shapes, (m, n, k))
        used = traffic.algorithm(kind, shapes, p)
        now = traffic.bytes_per_flop(kind, shapes, p)
        gemm = traffic.bytes_per_flop(kind, shapes, p, "gemm")
        floor = traffic.compulsory_bytes(kind, shapes) / flops
        naive = row_per_item_bytes(m, n, k) / flops
        # over the limit where a kernel could be under it (its operands fit under it)
        mark = "  OVER" if now > LIMIT and floor <= LIMIT else ("  (bound)" if now > LIMIT else "")
        if mark == "  OVER":
            over.append((layer, which))
        print(f"{layer:<22} {which:<12} {f'{m}x{n}x{k}':>18} {used:>7} {now:8.4f} {gemm:14.4f} "
              f"{floor:11.4f} {naive:9.2f}{mark}")
    print("(bound): over the limit because loading each operand once already is (a 3-channel "
          "filter gradient, a Dense layer on a batch of 32)")
    if over:
        print(f"over {LIMIT:.4f} B/FLOP where the operands allow less: {over}")
        return 1
    return 0


def legacy_table(batch, p):
    """The table from this script's own formula (a checkout without traffic.py)."""
    print(f"bytes from this script's formulas; tiled GEMM tiles: TSM={p['TSM']} TSN={p['TSN']}; "
          f"limit {LIMIT:.4f} B/FLOP; batch {batch}")
    for layer, which, kind, shapes, (m, n, k) in keras_cnn_products(batch):
        flops = flops_of(kind, shapes, (m, n, k))
        print(f"{layer:<22} {which:<12} {f'{m}x{n}x{k}':>18} {tiled_bytes(m, n, k, p) / flops:8.4f} "
              f"{row_per_item_bytes(m, n, k) / flops:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
