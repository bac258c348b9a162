"""The opencl backend's GPU profile, run here on whatever device there is (PoCL's CPU device in
CI): the tiled GEMM with transposed operands read in place, the tiled implicit-GEMM
convolutions, the cooperative reductions, work-group and local-memory limits, the profile's
selection, and the traffic formulas. Every op row of tests/test_ops.py also runs on the GPU
profile here (with the default 64 x 64 tiles; the opencl_tiled fixture has small ones).
"""

import math

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

from minidl import settings  # noqa: E402
from minidl.backends.base import Window2D  # noqa: E402
from test_ops import CASES, check_case  # noqa: E402

SMALL = {"family": "tiled", "TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "VWN": 4}
SMALL_CONV = {"TOH": 4, "TOW": 4, "TF": 8, "CK": 4, "WPP": 2, "WPF": 2}


@pytest.fixture
def gpu_be(opencl_gpu):
    return opencl_gpu


@pytest.fixture(params=["small tiles", "default tiles"])
def tiled_be(request, opencl_tiled, gpu_be):
    return opencl_tiled if request.param == "small tiles" else gpu_be


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------- selection
def test_the_profile_comes_from_the_setting_else_the_device_type(opencl_tiled, monkeypatch):
    import pyopencl as cl
    from minidl.backends.opencl import gemm
    from minidl.backends.opencl.runtime import Runtime, device_profile
    device = opencl_tiled.rt.device
    for value, expected in (("gpu", "gpu"), ("cpu", "cpu"),
                            (None, "gpu" if device.type & cl.device_type.GPU else "cpu")):
        if value is None:
            monkeypatch.delenv("MINIDL_OPENCL_PROFILE", raising=False)
        else:
            monkeypatch.setenv("MINIDL_OPENCL_PROFILE", value)
        monkeypatch.setattr(settings, "_current", settings.read())
        assert device_profile(device) == expected
    assert opencl_tiled.rt.profile == "gpu" == opencl_tiled.profile.name
    assert gemm.default_params(opencl_tiled.rt)["family"] == "tiled"
    with pytest.raises(ValueError, match="profile must be 'cpu' or 'gpu'"):
        Runtime(profile="fast")


def test_gpu_default_tiles_fit_the_device_limits(opencl_tiled, monkeypatch):
    from minidl.backends.opencl import gemm
    for limit in (1024, 256, 64, 16):
        params = gemm.tiled_default(limit)
        assert gemm.tiled_threads(params) <= limit
        assert (params["TSM"], params["TSN"]) == (64, 64)
    monkeypatch.setattr(opencl_tiled.rt, "local_mem_size", 4096)
    with pytest.raises(ValueError, match="local memory"):
        gemm.check_params(gemm.TILED_DEFAULT, opencl_tiled.rt)


def test_a_choice_tuned_under_the_other_profile_is_tuned_again(opencl_tiled, tmp_path,
                                                               monkeypatch):
    from minidl.backends.opencl import tuner
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path))
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", "1")
    monkeypatch.setattr(settings, "_current", settings.read())
    cpu_choice = {"family": "direct", "RM": 2, "VW": 4, "VN": 1, "local": None}
    tuner.save_entry(opencl_tiled.rt.device_key, {"params": cpu_choice, "profile": "cpu",
                                                  "version": tuner.TUNER_VERSION})
    fresh = {"params": dict(SMALL), "version": tuner.TUNER_VERSION, "profile": "gpu"}
    monkeypatch.setattr(tuner, "tune", lambda runtime: fresh)
    assert tuner.gemm_params(opencl_tiled.rt) == SMALL
    assert tuner.gemm_params(opencl_tiled.rt) == SMALL and tuner.last_source(opencl_tiled.rt) == "cached"


# --------------------------------------------------------------------------- GEMM
@pytest.mark.parametrize("m, n, k", [(5, 7, 3), (33, 17, 45), (70, 65, 130), (20, 30, 5000)])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_tiled_gemm_reads_transposed_operands_in_place(tiled_be, monkeypatch, m, n, k,
                                                       trans_a, trans_b):
    rng = np.random.default_rng(m + n + k)
    a = randn(rng, *((k, m) if trans_a else (m, k)))
    b = randn(rng, *((n, k) if trans_b else (k, n)))
    c0 = randn(rng, m, n)

    def no_transpose(*args):
        raise AssertionError("the tiled family must not transpose an operand first")

    monkeypatch.setattr(tiled_be, "_transpose_into", no_transpose)
    be = tiled_be
    out = be.from_numpy(c0)
    be.gemm(out, be.from_numpy(a), be.from_numpy(b), 0.5, 2.0, trans_a, trans_b)
    want = 0.5 * ((a.T if trans_a else a) @ (b.T if trans_b else b)) + 2.0 * c0
    np.testing.assert_allclose(be.to_numpy(out), want, rtol=1e-3, atol=1e-3)


def test_tiled_gemm_does_not_read_c_when_beta_is_zero(tiled_be):
    rng = np.random.default_rng(1)
    a, b = randn(rng, 19, 11), randn(rng, 11, 23)
    out = tiled_be.from_numpy(np.full((19, 23), np.nan, np.float32))
    tiled_be.gemm(out, tiled_be.from_numpy(a), tiled_be.from_numpy(b))
    np.testing.assert_allclose(tiled_be.to_numpy(out), a @ b, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------- convolutions
GEOMETRIES = [  # n, h, w, c, filters, kh, kw, sh, sw, (top, bottom, left, right)
    (2, 9, 8, 3, 5, 3, 3, 1, 1, (1, 1, 1, 1)),      # the 3-channel first layer, "same"
    (2, 9, 8, 4, 6, 3, 3, 2, 2, (0, 1, 0, 1)),      # strided
    (3, 7, 7, 5, 4, 1, 1, 1, 1, (0, 0, 0, 0)),      # 1x1
    (1, 6, 6, 8, 8, 1, 1, 2, 2, (0, 0, 0, 0)),      # 1x1 strided
    (2, 10, 9, 3, 20, 5, 4, 2, 3, (2, 1, 1, 2)),    # uneven kernel, strides and padding
    (2, 12, 12, 16, 33, 3, 3, 1, 1, (0, 0, 0, 0)),  # ragged filter tiles
    (1, 3, 3, 4, 33, 3, 3, 1, 1, (0, 0, 0, 0)),     # one output pixel: a short, wide tile
    (2, 11, 10, 10, 7, 3, 3, 1, 1, (1, 1, 1, 1)),   # a ragged channel chunk (4 + 4 + 2)
    (1, 12, 13, 2, 3, 1, 1, 3, 2, (0, 0, 0, 0)),    # stride larger than the kernel: rows skipped
]


def make_plan(n, h, w, c, oc, kh, kw, sh, sw, pads):
    oh = (h + pads[0] + pads[1] - kh) // sh + 1
    ow = (w + pads[2] + pads[3] - kw) // sw + 1
    return Window2D(n, h, w, c, kh, kw, sh, sw, *pads, oh, ow, oc)


def conv_all(be, plan, x, weight, bias, dout):
    out, dx = be.empty(plan.out_shape), be.empty(plan.in_shape)
    dweight, dbias = be.empty(weight.shape), be.empty(bias.shape)
    be.conv2d_forward(out, be.from_numpy(x), be.from_numpy(weight), be.from_numpy(bias), plan)
    be.conv2d_backward_data(dx, be.from_numpy(dout), be.from_numpy(weight), plan)
    be.conv2d_backward_filter(dweight, dbias, be.from_numpy(dout), be.from_numpy(x), plan)
    return [be.to_numpy(t) for t in (out, dx, dweight, dbias)]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: "x".join(map(str, g[:9])))
def test_tiled_convolutions_match_numpy_without_im2col(tiled_be, geometry):
    from minidl.backends.numpy_backend import NumpyBackend
    plan = make_plan(*geometry)
    rng = np.random.default_rng(3)
    x, dout = randn(rng, *plan.in_shape), randn(rng, *plan.out_shape)
    weight, bias = randn(rng, plan.kh, plan.kw, plan.c, plan.oc), randn(rng, plan.oc)
    tiled_be._scratch_tensors.pop("im2col", None)
    got = conv_all(tiled_be, plan, x, weight, bias, dout)
    assert "im2col" not in tiled_be._scratch_tensors
    want = conv_all(NumpyBackend(), make_plan(*geometry), x, weight, bias, dout)
    for name, g, w in zip(("out", "dx", "dweight", "dbias"), got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3, err_msg=name)


@pytest.mark.parametrize("stride", [1, 2])
def test_tiled_input_gradient_adds_nothing_from_taps_that_miss(tiled_be, stride):
    """A convolution's input gradient (stride 1: the direct kernel's rotated convolution,
    stride 2: the implicit-GEMM tiles): an inf weight reaches only the pixels its tap covers
    (col2im's rule), not every pixel through 0 * inf."""
    from minidl.backends.numpy_backend import NumpyBackend
    geometry = (1, 7, 7, 4, 5, 3, 3, stride, stride, (0, 0, 0, 0))
    rng = np.random.default_rng(5)
    plan = make_plan(*geometry)
    weight, dout = randn(rng, 3, 3, 4, 5), randn(rng, *plan.out_shape)
    weight[0, 0, 1, 2] = np.inf
    results = []
    for be, p in ((tiled_be, plan), (NumpyBackend(), make_plan(*geometry))):
        dx = be.empty(p.in_shape)
        be.conv2d_backward_data(dx, be.from_numpy(dout), be.from_numpy(weight), p)
        results.append(be.to_numpy(dx))
    got, want = results
    assert np.isfinite(want).any() and not np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)   # inf/nan in the same places


# ----------------------------------------------------------------------- reductions
def test_work_group_sizes_respect_the_kernel_and_local_memory(gpu_be, monkeypatch):
    from minidl.backends.opencl import group_ops
    kernel = gpu_be.rt.kernel("reduce_wg.cl", "sum_partial_wg")
    size = gpu_be.profile.group_size(kernel)
    assert size & (size - 1) == 0
    assert size <= min(group_ops.GROUP_MAX, gpu_be.rt.kernel_max_group(kernel))
    monkeypatch.setattr(gpu_be.rt, "local_mem_size", 64)
    with pytest.raises(RuntimeError, match="local memory"):
        gpu_be.sum(gpu_be.empty((1,)), gpu_be.from_numpy(np.ones(10, np.float32)))


@pytest.mark.parametrize("m, c", [(1, 1), (7, 3), (1000, 37), (4099, 64)])
def test_cooperative_column_sums_and_batchnorm_statistics(gpu_be, m, c):
    rng = np.random.default_rng(m)
    x = randn(rng, m, c) + 3.0
    be = gpu_be
    dbias = be.empty((c,))
    be.bias_grad(dbias, be.from_numpy(x))
    np.testing.assert_allclose(be.to_numpy(dbias), x.sum(axis=0), rtol=1e-4, atol=1e-3)
    mean, invstd, out = be.empty((c,)), be.empty((c,)), be.empty((m, c))
    ones, zeros = be.from_numpy(np.ones(c, np.float32)), be.from_numpy(np.zeros(c, np.float32))
    be.batchnorm_forward_train(out, mean, invstd, be.from_numpy(x), ones, zeros,
                               be.from_numpy(np.zeros(c, np.float32)),
                               be.from_numpy(np.ones(c, np.float32)), 0.9, 1e-3)
    np.testing.assert_allclose(be.to_numpy(mean), x.mean(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(be.to_numpy(invstd), 1 / np.sqrt(x.var(axis=0) + 1e-3),
                               rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("n", [1, 255, 257, 100003])
def test_cooperative_whole_tensor_sums(gpu_be, n):
    x = np.random.default_rng(n).random(n, dtype=np.float32)
    total = gpu_be.empty((1,))
    gpu_be.sum(total, gpu_be.from_numpy(x))
    assert gpu_be.to_numpy(total)[0] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-4)
    x[n // 2] = np.nan
    gpu_be.all_finite(total, gpu_be.from_numpy(x))
    assert gpu_be.to_numpy(total)[0] == 0.0


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_op_row_on_the_gpu_profile(gpu_be, case):
    check_case(gpu_be, case)


# -------------------------------------------------------------------------- traffic
def test_traffic_of_64_tiles_is_a_sixteenth_byte_per_flop():
    from minidl.backends.opencl import traffic
    from minidl.backends.opencl.gemm import TILED_DEFAULT
    square = {"m": 1024, "n": 1024, "k": 1024}
    assert traffic.bytes_per_flop("gemm", square, TILED_DEFAULT) == 1 / 16
    # a 64-filter convolution over 64 * 84 pixels: the same tiles, the patches read from x
    plan = make_plan(4, 42, 32, 64, 64, 3, 3, 1, 1, (1, 1, 1, 1))
    assert traffic.product_shape("conv2d_forward", plan) == (4 * 42 * 32, 64, 576)
    assert traffic.bytes_per_flop("conv2d_forward", plan, TILED_DEFAULT, "gemm") == 1 / 16
    # a product 32 columns wide cannot do better than 2 / 32 whatever its tiles
    narrow = {"m": 4096, "n": 32, "k": 288}
    assert traffic.bytes_per_flop("gemm", narrow, TILED_DEFAULT) > 1 / 16


@pytest.mark.parametrize("k", [1, 10, 300])
@pytest.mark.parametrize("sparse", [True, False])
def test_cooperative_softmax_rows_match_numpy(gpu_be, k, sparse):
    """One work-group per row: wider rows than lanes, a NaN row, probs written over logits."""
    from minidl.backends.numpy_backend import NumpyBackend
    rng = np.random.default_rng(k)
    logits = randn(rng, 6, k) * 4
    logits[2, k // 2] = np.nan
    labels = rng.integers(0, k, 6).astype(np.int32)
    targets = labels if sparse else np.eye(k, dtype=np.float32)[labels]
    results = []
    for be in (gpu_be, NumpyBackend()):
        shared, loss = be.from_numpy(logits), be.empty((6,))
        be.softmax_cross_entropy_forward(shared, loss, shared, be.from_numpy(targets))
        alone = be.from_numpy(logits)
        be.activation_forward(alone, alone, "softmax")
        results.append([be.to_numpy(t) for t in (shared, loss, alone)])
    for name, got, want in zip(("probs", "loss", "softmax"), *results):
        assert np.isnan(got[2]).all() == np.isnan(want[2]).all(), name
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_tiles_larger_than_the_kernel_allows_are_refused(opencl_tiled, monkeypatch):
    from minidl.backends.opencl.gemm import Gemm
    engine = Gemm(opencl_tiled.rt, SMALL)
    monkeypatch.setattr(opencl_tiled.rt, "kernel_max_group", lambda kernel: 32)
    a = opencl_tiled.from_numpy(np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match="at most 32 work-items"):
        engine.run(opencl_tiled.empty((4, 4)), a, a, 4, 4, 4, False, 1.0, 0.0)


def test_narrow_and_short_products_get_reshaped_tiles():
    from minidl.backends.opencl import gemm, traffic
    base = gemm.TILED_DEFAULT
    narrow = gemm.tile_for(base, 28800, 32)
    assert (narrow["TSM"], narrow["TSN"]) == (128, 32)
    short = gemm.tile_for(base, 32, 2304)
    assert (short["TSM"], short["TSN"]) == (32, 128)
    assert gemm.tiled_threads(short) == gemm.tiled_threads(base)
    assert gemm.tile_for(base, 40, 40) == base               # nothing to gain either way
    # a 32-filter convolution: 2 (128 + 32) / (128 * 32) bytes per flop instead of 3 / 32
    plan = make_plan(32, 32, 32, 32, 32, 3, 3, 1, 1, (0, 0, 0, 0))
    assert traffic.bytes_per_flop("conv2d_forward", plan, base, "gemm") == pytest.approx(0.078125, rel=1e-3)


# ------------------------------------------------------------- direct convolutions
def test_direct_convolutions_load_a_halo_patch_once_for_all_taps():
    """A 32-filter 3 x 3 layer: 8 x 16 pixel tiles x 32 filters. The patch (10 x 18 per chunk of
    channels) is loaded once per tile, the filters once per tile: 2 / 128 + the patch's share,
    under 1/16 where the implicit GEMM cannot go below 2 / 32 + ... ."""
    from minidl.backends.opencl import conv_direct, traffic
    from minidl.backends.opencl.gemm import TILED_DEFAULT
    plan = make_plan(32, 32, 32, 32, 32, 3, 3, 1, 1, (1, 1, 1, 1))
    defines, _ = traffic.direct_defines("conv2d_forward", plan, TILED_DEFAULT)
    assert (defines["TOH"], defines["TOW"], defines["TF"], defines["CK"]) == (8, 16, 32, 8)
    patch = 32 * (4 * 10 - 2) * (2 * 18 - 2) * 32   # each tile's rows and columns, less the padding
    filters = 32 * 4 * 2 * 9 * 32 * 32
    assert conv_direct.direct_loads(defines, plan) == patch + filters
    assert traffic.bytes_per_flop("conv2d_forward", plan, TILED_DEFAULT) == pytest.approx(
        4 * (patch + filters) / (2 * 32 * 32 * 32 * 9 * 32 * 32))
    for kind in ("conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter"):
        assert traffic.algorithm(kind, plan, TILED_DEFAULT) == "direct"
        assert traffic.bytes_per_flop(kind, plan, TILED_DEFAULT) < 1 / 16
        assert traffic.bytes_per_flop(kind, plan, TILED_DEFAULT, "gemm") > 1 / 16
    strided = make_plan(2, 9, 9, 4, 8, 3, 3, 2, 2, (1, 1, 1, 1))
    assert traffic.algorithm("conv2d_backward_data", strided, TILED_DEFAULT) == "gemm"
    assert traffic.algorithm("conv2d_forward", plan, dict(TILED_DEFAULT, conv=False)) == "gemm"


def test_the_traffic_table_is_under_a_sixteenth_where_the_operands_allow(capsys):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "benchmarks", "opencl_traffic.py")
    spec = importlib.util.spec_from_file_location("opencl_traffic", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([]) == 0
    table = capsys.readouterr().out
    rows = [line.split() for line in table.splitlines() if line.startswith("conv")]
    # ... kernel, B/FLOP, implicit GEMM, compulsory, row/item[, (bound)]
    assert len(rows) == 11 and all(row[-5] == "direct" and float(row[-4]) < 1 / 16
                                   for row in rows if row[-1] != "(bound)")
    assert sum(row[-1] == "(bound)" for row in rows) == 1    # the 3-channel filter gradient
    assert "OVER" not in table


def test_direct_tiles_shrink_to_the_device_or_give_way(gpu_be, monkeypatch):
    from minidl.backends.opencl import conv_direct
    plan = make_plan(2, 12, 12, 32, 64, 3, 3, 1, 1, (1, 1, 1, 1))
    params = conv_direct.CONV_DEFAULT
    full = conv_direct.kernel_defines(params, plan)
    assert full["CK"] == 8 and conv_direct.local_bytes(full) == 4 * (10 * 10 * 8 + 9 * 8 * 65)
    # less local memory: fewer channels per step; fewer work-items: larger register blocks
    small = conv_direct.kernel_defines(params, plan, local_limit=conv_direct.local_bytes(full) // 2)
    assert small["CK"] == 4 and conv_direct.local_bytes(small) <= conv_direct.local_bytes(full) // 2
    narrow = conv_direct.kernel_defines(params, plan, group_limit=64)
    assert math.prod(conv_direct.local_size(narrow)) <= 64 and narrow["TF"] == 64
    assert conv_direct.kernel_defines(params, plan, local_limit=1000) is None
    # where the built kernel cannot run the work-group (its registers), the implicit-GEMM tiles
    # compute it, and get it right
    limit = gpu_be.rt.kernel_max_group
    monkeypatch.setattr(gpu_be, "_direct_defines", {}, raising=False)   # choices made before
    monkeypatch.setattr(gpu_be.rt, "kernel_max_group",
                        lambda k: 16 if k.function_name.endswith("direct") else limit(k))
    launched = []
    launch = gpu_be.rt.launch
    monkeypatch.setattr(gpu_be.rt, "launch", lambda k, *a: launched.append(k.function_name) or launch(k, *a))
    test_tiled_convolutions_match_numpy_without_im2col(gpu_be, (2, 6, 7, 3, 5, 3, 3, 1, 1, (1, 1, 1, 1)))
    assert {"conv2d_forward_tiled", "conv2d_backward_data_tiled",
            "conv2d_backward_filter_tiled"} <= set(launched)
    assert not {"conv2d_direct", "conv2d_backward_filter_direct"} & set(launched)


def test_conv_false_runs_the_implicit_gemm_tiles(opencl_tiled, monkeypatch):
    from minidl.backends.opencl import create
    be = create(runtime=opencl_tiled.rt, gemm_params=dict(SMALL, conv=False))
    launched = []
    launch = be.rt.launch
    monkeypatch.setattr(be.rt, "launch", lambda k, *a: launched.append(k.function_name) or launch(k, *a))
    test_tiled_convolutions_match_numpy_without_im2col(be, GEOMETRIES[0])
    assert "conv2d_forward_tiled" in launched and "conv2d_direct" not in launched
    with pytest.raises(ValueError, match="WPF must divide TF"):
        create(runtime=opencl_tiled.rt, gemm_params=dict(SMALL, conv={
            "TOH": 4, "TOW": 4, "TF": 6, "CK": 4, "WPP": 2, "WPF": 4})).conv2d_forward(
            be.empty((1, 1, 1, 6)), be.empty((1, 3, 3, 1)), be.empty((3, 3, 1, 6)), None,
            make_plan(1, 3, 3, 1, 6, 3, 3, 1, 1, (0, 0, 0, 0)))


def test_the_tuner_times_the_direct_tiles_and_keeps_the_fastest(opencl_tiled, monkeypatch):
    from minidl.backends.opencl import tuner
    monkeypatch.setattr(tuner, "TUNE_CONVS", (((1, 6, 6, 3), 4),))
    too_big = {"TOH": 512, "TOW": 512, "TF": 8, "CK": 1, "WPP": 1, "WPF": 1}   # a 1 MB patch
    small = SMALL_CONV
    results = tuner.tune_convolutions(opencl_tiled.rt, SMALL, [too_big, small], repeats=1)
    assert [r["params"] for r in results] == [too_big, small]
    assert results[0]["gflops"] is None and results[1]["gflops"] is not None
    monkeypatch.setattr(tuner, "tune_convolutions", lambda runtime, params: results)
    entry = tuner.tune(opencl_tiled.rt, candidates=[SMALL], shapes=[(16, 16, 16)], repeats=1)
    assert entry["params"] == dict(SMALL, conv=small) and entry["conv_results"] == results


def test_a_stored_choice_with_broken_conv_tiles_is_tuned_again(opencl_tiled, tmp_path, monkeypatch):
    from minidl.backends.opencl import tuner
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path))
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", "1")
    monkeypatch.setattr(settings, "_current", settings.read())
    broken = dict(SMALL, conv={"TOH": 4, "TOW": 4, "TF": 8, "CK": 0, "WPP": 2, "WPF": 2})
    tuner.save_entry(opencl_tiled.rt.device_key, {"params": broken, "profile": "gpu",
                                                  "version": tuner.TUNER_VERSION})
    fresh = {"params": dict(SMALL, conv=SMALL_CONV), "version": tuner.TUNER_VERSION, "profile": "gpu"}
    monkeypatch.setattr(tuner, "tune", lambda runtime: fresh)
    assert tuner.gemm_params(opencl_tiled.rt) == fresh["params"]
    assert tuner.last_source(opencl_tiled.rt) == "tuned"
