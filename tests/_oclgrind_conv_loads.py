"""The direct tiled convolutions' global loads, for Oclgrind's instruction counter:
tests/test_oclgrind.py runs this under `oclgrind --inst-counts` and compares the bytes Oclgrind
saw each launch load from global memory with what traffic.py's formulas say it loads.

    oclgrind --inst-counts python tests/_oclgrind_conv_loads.py

It runs conv2d_forward, conv2d_backward_data and conv2d_backward_filter of a few small geometries
(ragged pixel, filter and channel tiles; stride, padding, a split filter gradient) on the GPU
profile, checks the results against numpy, and prints one JSON line: per launch in order, the
kernel name and the bytes the formulas expect it to load.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

# n, h, w, c, filters, kh, kw, sh, sw, (top, bottom, left, right)
GEOMETRIES = [
    (1, 10, 9, 3, 5, 3, 3, 1, 1, (1, 1, 1, 1)),      # 3 channels, "same", ragged tiles
    (2, 9, 11, 12, 6, 3, 2, 2, 3, (1, 1, 0, 1)),     # strided: dx on the implicit-GEMM tiles
    (4, 12, 12, 10, 7, 3, 3, 1, 1, (0, 0, 0, 0)),    # a ragged channel chunk, a split dweight
]
# Small tiles, so that a few work-groups of few work-items do all of it quickly under Oclgrind
CONV = {"TOH": 4, "TOW": 4, "TF": 8, "CK": 4, "WPP": 2, "WPF": 2}


def main():
    from minidl.backends.numpy_backend import NumpyBackend
    from minidl.backends.opencl import create, traffic
    from minidl.backends.opencl.gemm import TILED_DEFAULT
    from minidl.backends.opencl.runtime import Runtime
    from test_opencl_gpu_profile import conv_all, make_plan, randn
    params = dict(TILED_DEFAULT, conv=CONV)
    be = create(runtime=Runtime(profile="gpu"), gemm_params=params)
    expected = []
    for geometry in GEOMETRIES:
        rng = np.random.default_rng(1)
        plan = make_plan(*geometry)
        x, dout = randn(rng, *plan.in_shape), randn(rng, *plan.out_shape)
        weight, bias = randn(rng, plan.kh, plan.kw, plan.c, plan.oc), randn(rng, plan.oc)
        got = conv_all(be, plan, x, weight, bias, dout)
        want = conv_all(NumpyBackend(), make_plan(*geometry), x, weight, bias, dout)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3)
        for kind, shapes in (("conv2d_forward", {"plan": plan, "bias": True}),
                             ("conv2d_backward_data", plan), ("conv2d_backward_filter", plan)):
            if traffic.algorithm(kind, shapes, params) != "direct":
                expected.append(None)   # a launch of another family, not compared
                continue
            defines, at = traffic.direct_defines(kind, shapes, params)
            filter_grad = kind == "conv2d_backward_filter"
            loads = traffic.conv_direct.direct_loads(defines, at, filter_grad)
            name = "conv2d_backward_filter_direct" if filter_grad else "conv2d_direct"
            if filter_grad:
                slices, _ = traffic.conv_direct.filter_slices(defines, at)
                size = at.kh * at.kw * at.c * at.oc
                loads -= slices * size if slices > 1 else 0   # gemm_sum_slices reads those
                expected.append([name, 4 * loads])
                if slices > 1:
                    expected.append(["gemm_sum_slices", 4 * slices * size])
            else:   # the forward pass reads the bias once per result
                bias_reads = at.n * at.oh * at.ow * at.oc if kind == "conv2d_forward" else 0
                expected.append([name, 4 * (loads + bias_reads)])
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
