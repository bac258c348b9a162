"""The opencl backend's own behaviour: GEMM parameter sets, the default family, scratch reuse,
transfer counters, device selection and the tuner. The ops themselves are compared with the
numpy reference in tests/test_ops.py (on the default GEMM family and on the tiled one).

Skipped as a whole only when pyopencl is missing or no OpenCL platform exists here.
Tuning is disabled (MINIDL_OPENCL_TUNE=0) so that the default GEMM kernel is used,
except in the tuner tests, which time a tiny candidate set in a temporary MINIDL_HOME.
"""

import json
import os

import numpy as np
import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

from minidl.backends.base import BackendUnavailable  # noqa: E402


@pytest.fixture(scope="module")
def cl_be():
    os.environ["MINIDL_OPENCL_TUNE"] = "0"
    from minidl.backends.opencl import create
    try:
        return create()
    except BackendUnavailable as exc:
        pytest.skip(f"no OpenCL platform here: {exc}")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------------------ gemm
def test_untuned_gemm_family_follows_the_profile(cl_be):
    # tests run untuned: the register-blocked family for the cpu profile, the tiled one for gpu
    info = cl_be.info()
    assert info["profile"] == cl_be.rt.profile in ("cpu", "gpu")
    assert info["gemm"]["family"] == {"cpu": "direct", "gpu": "tiled"}[info["profile"]]


def test_the_backend_runs_the_profile_object_of_its_runtime(cl_be):
    from minidl.backends.opencl.profiles import CpuProfile, GpuProfile
    # chosen once, when the backend starts: the ops ask it which kernel shape runs
    assert type(cl_be.profile) is {"cpu": CpuProfile, "gpu": GpuProfile}[cl_be.rt.profile]
    assert cl_be.profile.name == cl_be.rt.profile and cl_be.profile.backend is cl_be


class FakeDevice:
    def __init__(self, type_bits):
        self.type = type_bits


def profile_setting(monkeypatch, name, value):
    """MINIDL_<name>=value (or unset for None) for this test only (minidl.settings re-read)."""
    from minidl import settings
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(settings, "_current", settings.read())


def test_profile_comes_from_the_setting_else_the_device_type(monkeypatch):
    import pyopencl as cl
    from minidl.backends.opencl.runtime import device_profile
    t = cl.device_type
    oclgrind = t.CPU | t.GPU | t.ACCELERATOR   # how Oclgrind describes its simulated device
    profile_setting(monkeypatch, "MINIDL_OPENCL_PROFILE", None)
    assert [device_profile(FakeDevice(bits)) for bits in
            (t.GPU, t.GPU | t.DEFAULT, t.CPU, t.ACCELERATOR, oclgrind)] == ["gpu", "gpu", "cpu", "cpu", "gpu"]
    profile_setting(monkeypatch, "MINIDL_OPENCL_PROFILE", "GPU")
    assert device_profile(FakeDevice(t.CPU)) == "gpu"
    profile_setting(monkeypatch, "MINIDL_OPENCL_PROFILE", "cpu")
    assert device_profile(FakeDevice(t.GPU)) == "cpu"


def test_the_profile_setting_picks_the_untuned_gemm_family(cl_be, monkeypatch):
    from minidl.backends.opencl import create
    from minidl.backends.opencl.runtime import Runtime
    for profile, family in (("cpu", "direct"), ("gpu", "tiled")):
        profile_setting(monkeypatch, "MINIDL_OPENCL_PROFILE", profile)
        runtime = Runtime()
        assert runtime.profile == profile
        assert create(runtime=runtime).info()["gemm"]["family"] == family
    from minidl import settings
    monkeypatch.setenv("MINIDL_OPENCL_PROFILE", "fpga")
    with pytest.raises(settings.SettingError, match="MINIDL_OPENCL_PROFILE='fpga'.*cpu, gpu"):
        settings.read()


def test_extra_build_options_reach_every_program(cl_be, monkeypatch):
    from minidl import settings
    from minidl.backends.opencl.runtime import BASE_BUILD_OPTIONS, build_options
    profile_setting(monkeypatch, "MINIDL_OPENCL_BUILD_OPTIONS", " -cl-opt-disable  -DEXTRA=7 ")
    assert build_options({"TSM": 16, "RM": 2}) == [
        *BASE_BUILD_OPTIONS, "-cl-opt-disable", "-DEXTRA=7", "-DRM=2", "-DTSM=16"]
    import pyopencl as cl
    program = cl_be.rt.program("elementwise.cl")     # built anew: the options are its cache key
    assert any(p is program and "-cl-opt-disable" in options and "-DEXTRA=7" in options
               for (_, options), p in cl_be.rt._programs.items())
    built_with = program.get_build_info(cl_be.rt.device, cl.program_build_info.OPTIONS)
    if built_with:   # what the driver says it used (rusticl 22.3 says nothing)
        assert "-cl-opt-disable" in built_with and "-DEXTRA=7" in built_with
    monkeypatch.setenv("MINIDL_OPENCL_BUILD_OPTIONS", "-I '/a dir' -w")   # split as a shell would
    assert settings.read().opencl_build_options == ("-I", "/a dir", "-w")
    monkeypatch.setenv("MINIDL_OPENCL_BUILD_OPTIONS", "-DX='unclosed")
    with pytest.raises(settings.SettingError, match="MINIDL_OPENCL_BUILD_OPTIONS"):
        settings.read()
    profile_setting(monkeypatch, "MINIDL_OPENCL_BUILD_OPTIONS", None)
    assert build_options() == list(BASE_BUILD_OPTIONS)


def test_a_required_work_group_size_counts_as_runnable(cl_be):
    import pyopencl as cl
    info = cl.kernel_work_group_info

    class Reported:   # what Mesa 22.3's rusticl answers for a reqd_work_group_size(16, 16, 1) kernel
        def __init__(self, required):
            self.required = required

        def get_work_group_info(self, param, device):
            return {info.WORK_GROUP_SIZE: 32, info.COMPILE_WORK_GROUP_SIZE: self.required}[param]

    assert cl_be.rt.kernel_max_group(Reported([16, 16, 1])) == 256
    assert cl_be.rt.kernel_max_group(Reported([0, 0, 0])) == 32


def test_gemm_rejects_mismatched_shapes(cl_be):
    with pytest.raises(ValueError, match=r"gemm.*\(3, 4\)"):
        cl_be.gemm(cl_be.empty((3, 5)), cl_be.empty((3, 4)), cl_be.empty((5, 5)))


def test_other_gemm_parameter_sets_match_numpy(cl_be, rng):
    from minidl.backends.opencl.gemm import Gemm
    narrow = {"family": "direct", "RM": 3, "VW": 4, "VN": 2, "local": [1, 1]}
    wide_tiles = {"family": "tiled", "TSM": 32, "TSN": 64, "TSK": 4, "WPTM": 4, "WPTN": 8, "VWN": 8}
    for params in (narrow, wide_tiles):
        engine = Gemm(cl_be.rt, params)
        for trans_a in (False, True):
            m, n, k = 45, 38, 21
            a = randn(rng, *((k, m) if trans_a else (m, k)))
            b, c = randn(rng, k, n), randn(rng, m, n)
            out = cl_be.from_numpy(c)
            engine.run(out, cl_be.from_numpy(a), cl_be.from_numpy(b), m, n, k, trans_a, 1.25, -0.5)
            expected = 1.25 * ((a.T if trans_a else a) @ b) - 0.5 * c
            np.testing.assert_allclose(cl_be.to_numpy(out), expected, rtol=1e-4, atol=1e-4,
                                       err_msg=str(params))


def test_the_long_k_gemm_row_takes_the_split_k_path():
    from minidl.backends.opencl import gemm
    m, n, k = 27, 37, 5000   # tests/test_ops.py's gemm-27x37x5000 row: few blocks of C, a long k axis
    assert gemm.split_k_slices(max(1, m // 12) * max(1, n // 32), k) > 1


# ----------------------------------------------------------------------- convolution
def test_conv_scratch_is_made_once_and_reused(cl_be, rng):
    """The scratch is made once per plan (and per backend for im2col) and reused by later calls."""
    from minidl.backends.opencl.conv import OpenCLPlanScratch
    for in_shape, kernel_shape in (((2, 9, 7, 3), (3, 3, 3, 5)), ((2, 9, 8, 12), (3, 3, 12, 10))):
        plan = cl_be.conv2d_plan(in_shape, kernel_shape, (1, 1), "same")
        x, weight = cl_be.from_numpy(randn(rng, *in_shape)), cl_be.from_numpy(randn(rng, *kernel_shape))
        dout = cl_be.from_numpy(randn(rng, *plan.out_shape))
        run = [lambda: cl_be.conv2d_forward(cl_be.empty(plan.out_shape), x, weight, None, plan),
               lambda: cl_be.conv2d_backward_data(cl_be.empty(in_shape), dout, weight, plan)]
        for step in run:
            step()
        held = plan.scratch_for(OpenCLPlanScratch)
        fields, im2col = dict(vars(held)), cl_be._scratch_tensors.get("im2col")
        assert fields["flipped_plan"] is not None   # backward-data of a stride-1 convolution
        for step in run:
            step()
        assert plan.scratch_for(OpenCLPlanScratch) is held
        assert all(getattr(held, k) is v for k, v in fields.items())
        assert cl_be._scratch_tensors.get("im2col") is im2col


def test_conv2d_rejects_wrong_input_shape(cl_be):
    plan = cl_be.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    with pytest.raises(ValueError, match=r"conv2d_forward: x .*\(2, 5, 5, 3\)"):
        cl_be.conv2d_forward(cl_be.empty((2, 5, 5, 4)), cl_be.empty((2, 5, 5, 4)),
                             cl_be.empty((3, 3, 3, 4)), None, plan)


# ------------------------------------------------------------------ dropout, clipping
def test_dropout_rejects_a_rate_of_one(cl_be):
    x = cl_be.zeros((4, 5))
    with pytest.raises(ValueError, match="rate"):
        cl_be.dropout_forward(cl_be.empty((4, 5)), cl_be.empty((4, 5)), x, 1.0, 1)


def test_dropout_rejects_a_seed_that_is_not_an_int(cl_be):
    # the numpy and cpu backends' check (checks.check_dropout_args), which int(seed) used to skip
    x = cl_be.zeros((4, 5))
    with pytest.raises(TypeError, match=r"dropout_forward: seed must be an int, got float"):
        cl_be.dropout_forward(cl_be.empty((4, 5)), cl_be.empty((4, 5)), x, 0.5, 1.5)


def test_clip_by_norm_never_leaves_the_device(cl_be, rng):
    tg = cl_be.from_numpy(3 * randn(rng, 1001))
    cl_be.synchronize()
    cl_be.reset_stats()
    cl_be.clip_by_norm(tg, 0.5)
    assert cl_be.stats()["d2h_count"] == 0   # the norm never left the device


# -------------------------------------------------------------------- memory, traffic
def test_transfer_counters_and_views(cl_be, rng):
    cl_be.synchronize()
    cl_be.reset_stats()
    x = randn(rng, 4, 6)
    tx = cl_be.from_numpy(x)
    out = cl_be.empty((4, 6))
    cl_be.copy_from_host(out, x)
    assert cl_be.stats() == {"h2d_count": 2, "h2d_bytes": 2 * x.nbytes, "d2h_count": 0, "d2h_bytes": 0}
    total = cl_be.zeros((1,))
    for _ in range(3):   # device-side work moves nothing across
        cl_be.activation_forward(out, tx, "relu")
        cl_be.sum(total, out, accumulate=True)
    assert cl_be.stats()["d2h_count"] == 0 and cl_be.stats()["h2d_count"] == 2
    view = cl_be.reshape(tx, (24,))
    assert view.shape == (24,) and view.buffer is tx.buffer
    cl_be.fill(view, 2.0)
    np.testing.assert_array_equal(cl_be.to_numpy(tx), np.full((4, 6), 2.0, np.float32))
    assert cl_be.to_numpy(total).shape == (1,)
    assert cl_be.stats()["d2h_count"] == 2 and cl_be.stats()["d2h_bytes"] == x.nbytes + 4
    cl_be.reset_stats()
    assert cl_be.stats() == {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}
    with pytest.raises(ValueError, match="reshape"):
        cl_be.reshape(tx, (5, 5))


def test_info_reports_device_and_gemm_parameters(cl_be):
    info = cl_be.info()
    for key in ("platform", "device", "compute_units", "global_memory_bytes", "gemm"):
        assert key in info
    assert info["name"] == "opencl" and info["gemm"]["family"] in ("direct", "tiled")
    assert info["profile"] in ("cpu", "gpu")


# -------------------------------------------------------------------- device selection
def test_device_selection_by_index_and_name(cl_be):
    from minidl.backends.opencl.runtime import select_device
    platform, device = select_device("0:0")
    assert device.name
    assert select_device(device.name[:5])[1].name == device.name
    with pytest.raises(LookupError, match="matches no OpenCL device"):
        select_device("no-such-device-anywhere")


def test_no_platform_raises_backend_unavailable(monkeypatch):
    import pyopencl as cl
    from minidl.backends.opencl import create
    monkeypatch.setattr(cl, "get_platforms", lambda: [])
    with pytest.raises(BackendUnavailable, match="pocl-opencl-icd"):
        create()


# ----------------------------------------------------------------------------- tuner
def tuner_settings(monkeypatch, home, tune):
    """MINIDL_HOME and MINIDL_OPENCL_TUNE for this test only (minidl.settings re-read)."""
    from minidl import settings
    monkeypatch.setenv("MINIDL_HOME", str(home))
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", tune)
    monkeypatch.setattr(settings, "_current", settings.read())


TINY_CANDIDATES = [
    {"family": "direct", "RM": 2, "VW": 4, "VN": 1, "local": None},
    {"family": "tiled", "TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "VWN": 4},
]


def test_tuner_picks_the_fastest_and_caches_it(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import tuner
    tuner_settings(monkeypatch, tmp_path, "1")
    monkeypatch.setattr(tuner, "DIRECT_CANDIDATES", TINY_CANDIDATES[:1])
    monkeypatch.setattr(tuner, "TILED_CANDIDATES", TINY_CANDIDATES[1:])
    monkeypatch.setattr(tuner, "TUNE_SHAPES", ((64, 64, 64), (96, 40, 20)))
    tiny_conv = {"TOH": 4, "TOW": 4, "TF": 8, "CK": 4, "WPP": 2, "WPF": 2}
    monkeypatch.setattr(tuner, "TUNE_CONVS", (((1, 6, 6, 3), 4),))
    monkeypatch.setattr(tuner, "CONV_CANDIDATES", [tiny_conv])
    params = tuner.gemm_params(cl_be.rt)
    table = json.loads((tmp_path / "opencl_tuning.json").read_text())
    entry = table[cl_be.rt.device_key]
    timed = [r for r in entry["results"] if r["gflops"] is not None]
    assert len(timed) == 2 and all(len(r["gflops_by_shape"]) == 2 for r in timed)
    fastest = max(timed, key=lambda r: r["gflops"])["params"]
    # the tiled family also gets the direct convolutions' fastest tiles
    assert params == entry["params"] == (dict(fastest, conv=tiny_conv) if fastest["family"] == "tiled"
                                         else fastest)
    assert tuner.last_source(cl_be.rt) == "tuned"

    def no_tuning(*args, **kwargs):
        raise AssertionError("a stored choice must not be tuned again")

    monkeypatch.setattr(tuner, "tune", no_tuning)
    assert tuner.gemm_params(cl_be.rt) == params
    assert tuner.last_source(cl_be.rt) == "cached"


def test_tuning_disabled_uses_the_default(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import gemm, tuner
    tuner_settings(monkeypatch, tmp_path, "0")
    assert tuner.gemm_params(cl_be.rt) == gemm.default_params(cl_be.rt)
    assert not (tmp_path / "opencl_tuning.json").exists()
    # disabled tuning ignores stored choices too
    stored = {"params": TINY_CANDIDATES[0], "version": tuner.TUNER_VERSION}
    tuner.save_entry(cl_be.rt.device_key, stored)
    assert tuner.gemm_params(cl_be.rt) == gemm.default_params(cl_be.rt)


def test_a_choice_stored_by_another_tuner_version_is_tuned_again(cl_be, tmp_path, monkeypatch):
    from minidl.backends.opencl import tuner
    tuner_settings(monkeypatch, tmp_path, "1")
    tuner.save_entry(cl_be.rt.device_key, {"params": TINY_CANDIDATES[0], "version": -1})
    fresh = {"params": TINY_CANDIDATES[1], "gflops": 1.0, "version": tuner.TUNER_VERSION}
    monkeypatch.setattr(tuner, "tune", lambda runtime: fresh)
    assert tuner.gemm_params(cl_be.rt) == TINY_CANDIDATES[1]
    assert tuner.load_cache()[cl_be.rt.device_key] == fresh


def test_tuner_skips_a_candidate_that_computes_wrong_numbers(cl_be, monkeypatch):
    from minidl.backends.opencl import tuner
    def wrong_product(self, c, *args):
        self.rt.write(c, np.zeros(c.shape, np.float32))

    monkeypatch.setattr(tuner.Gemm, "run", wrong_product)
    entry = tuner.tune(cl_be.rt, candidates=TINY_CANDIDATES, shapes=[(64, 64, 64)], repeats=1)
    assert all(r["gflops"] is None for r in entry["results"])
