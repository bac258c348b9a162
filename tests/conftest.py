"""Test-session settings, applied before any test module imports minidl, and the fixtures that
run a test on every backend (`backend`) and on every cpu instruction-set path (`isa`)."""

import contextlib
import os
import tempfile

import pytest

# The OpenCL GEMM tuner takes up to ~25 s and its choice depends on machine load: tests use the
# default kernels (the tuner's own tests switch it on explicitly).
os.environ.setdefault("MINIDL_OPENCL_TUNE", "0")
# Keep tests away from the user's ~/.minidl (dataset cache, tuning results).
os.environ.setdefault("MINIDL_HOME", tempfile.mkdtemp(prefix="minidl-tests-"))

CPU_ISAS = ("generic", "avx2", "avx512")      # minidl_set_isa's numbering: 0, 1, 2

# The GPU-style OpenCL GEMM family with small tiles, so that tests see ragged ones.
SMALL_TILES = {"family": "tiled", "TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "VWN": 4,
               "conv": {"TOH": 4, "TOW": 4, "TF": 8, "CK": 4, "WPP": 2, "WPF": 2}}


def cpu_isas_here():
    """The cpu ISA paths this machine can run (all of them when the extension is missing:
    the cpu tests then fail at set-up, they are not skipped)."""
    try:
        from minidl._cpu_kernels import lib
    except ImportError:
        return list(CPU_ISAS)
    return [name for index, name in enumerate(CPU_ISAS) if index <= lib.minidl_cpu_best_isa()]


@contextlib.contextmanager
def isa_selected(name):
    """Run the cpu kernels on ISA path `name` in this process, then restore the previous one."""
    from minidl._cpu_kernels import lib
    index = CPU_ISAS.index(name)
    before = lib.minidl_cpu_isa()
    assert lib.minidl_set_isa(index) == index, f"this CPU cannot run the {name} path"
    try:
        yield name
    finally:
        lib.minidl_set_isa(before)


@pytest.fixture(params=cpu_isas_here())
def isa(request):
    """Each cpu test that takes `isa` runs once per instruction set this CPU has."""
    with isa_selected(request.param):
        yield request.param


# ------------------------------------------------------------------ backends
_made = {}


def _make(name):
    """The backend `name` ("numpy", "cpu", "opencl", "opencl-tiled", "opencl-gpu"), made once
    per session."""
    from minidl.backends.base import BackendUnavailable
    if name not in _made:
        try:
            if name == "numpy":
                from minidl.backends.numpy_backend import NumpyBackend
                _made[name] = NumpyBackend()
            elif name == "cpu":
                from minidl.backends.cpu import create
                _made[name] = create()
            elif name == "opencl":
                from minidl.backends.opencl import create
                _made[name] = create()
            elif name == "opencl-tiled":
                # the GPU profile (tiled GEMM and convolutions, cooperative reductions) whatever
                # the device, with small tiles so that tests see ragged ones
                from minidl.backends.opencl import create
                from minidl.backends.opencl.runtime import Runtime
                runtime = _make("opencl").rt
                if runtime.profile != "gpu":
                    runtime = Runtime(profile="gpu")
                _made[name] = create(runtime=runtime, gemm_params=dict(SMALL_TILES))
            elif name == "opencl-gpu":
                from minidl.backends.opencl import create
                _made[name] = create(runtime=_make("opencl-tiled").rt)   # the default GPU tiles
            else:
                pytest.fail(f"backend {name!r} is usable here but tests/conftest.py cannot make it")
        except BackendUnavailable as exc:
            _made[name] = exc
    made = _made[name]
    if isinstance(made, BackendUnavailable):
        if name == "cpu":
            pytest.fail(f"the cpu backend must be built for the tests: {made}")
        pytest.skip(f"{name}: {made}")
    return made


def backend_variants():
    """numpy (float32, against the float64 reference), cpu once per ISA path, every other usable
    backend, and opencl always (skipped at set-up where there is no OpenCL platform)."""
    from minidl.backends import available_backends
    others = [name for name in available_backends() if name not in ("numpy", "cpu")]
    if "opencl" not in others:
        others.append("opencl")
    return ["numpy"] + [f"cpu-{isa}" for isa in cpu_isas_here()] + others


def _parametrized_names(marker):
    names = marker.args[0]
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames:
        return
    if any("backend" in _parametrized_names(m) for m in metafunc.definition.iter_markers("parametrize")):
        return                                          # the test names its own backends
    metafunc.parametrize("backend", backend_variants(), indirect=True)


@pytest.fixture
def backend(request):
    """A test taking `backend` runs on every variant of backend_variants(); for cpu-<isa> the
    ISA path is switched in-process for the test's duration."""
    name, _, isa_name = request.param.partition("-")
    if name != "cpu":
        yield _make(request.param)
        return
    made = _make("cpu")
    with isa_selected(isa_name):
        assert made.info()["isa"] == isa_name
        yield made


@pytest.fixture
def opencl_tiled():
    """The opencl device with the GPU profile's kernels and small tiles (the tiled GEMM family)."""
    return _make("opencl-tiled")


@pytest.fixture
def opencl_gpu():
    """The opencl device with the GPU profile's kernels and its default (64 x 64) tiles."""
    return _make("opencl-gpu")


def _usable_backends():
    import minidl                     # after the settings above
    return minidl.available_backends()


@pytest.fixture(params=_usable_backends())
def active_backend(request):
    """A model-level test taking it runs with every usable backend active (a module may define
    its own fixture of this name, which then wins)."""
    import minidl
    minidl.set_backend(request.param)
    minidl.set_seed(0)
    yield request.param
    minidl.set_backend("numpy")
