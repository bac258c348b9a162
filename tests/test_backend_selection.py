"""Choosing a backend: MINIDL_BACKEND and MINIDL_OPENCL_DEVICE, their error messages, and that
listing or selecting backends is cheap (the OpenCL GEMM is tuned on its first use only)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minidl
from minidl import backends, settings
from minidl.backends.base import BackendUnavailable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAS_OPENCL = backends.unavailable_reason("opencl") is None
needs_opencl = pytest.mark.skipif(not HAS_OPENCL, reason="no OpenCL device (pocl-opencl-icd)")


@pytest.fixture
def env(monkeypatch):
    """env(NAME=value, ...): set MINIDL_* variables for this test, re-read by minidl.settings,
    with a fresh backend registry (both restored afterwards)."""
    monkeypatch.setattr(backends, "_instances", {})
    monkeypatch.setattr(backends, "_active", None)

    def set_variables(**variables):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(settings, "_current", settings.read())
    return set_variables


# ------------------------------------------------------------------------- MINIDL_BACKEND
def test_an_unknown_minidl_backend_names_the_variable(env):
    env(MINIDL_BACKEND="bogus")
    with pytest.raises(ValueError) as info:
        backends.get_backend()
    message = str(info.value)
    assert "MINIDL_BACKEND='bogus'" in message
    assert "known backends: ['cpu', 'numpy', 'opencl']" in message


@pytest.mark.parametrize("value", [" NumPy ", "NUMPY", "numpy\n"])
def test_minidl_backend_ignores_case_and_spaces(env, value):
    env(MINIDL_BACKEND=value)
    assert backends.get_backend().name == "numpy"


@needs_opencl
def test_minidl_backend_opencl_in_any_case(env):
    env(MINIDL_BACKEND=" OpenCL ", MINIDL_OPENCL_TUNE="0")
    assert backends.get_backend().name == "opencl"
    assert minidl.set_backend("OpenCL").name == "opencl"


# ------------------------------------------------------------------ MINIDL_OPENCL_DEVICE
@needs_opencl
@pytest.mark.parametrize("selector", ["1:0", "nvidia", "0:7"])
def test_a_device_selector_that_matches_nothing_lists_the_devices(env, selector):
    import pyopencl as cl
    from minidl.backends.opencl import create

    names = [d.name for p in cl.get_platforms() for d in p.get_devices()]
    if any(selector in name.lower() for name in names):
        pytest.skip(f"a device here matches {selector!r}")
    env(MINIDL_OPENCL_DEVICE=selector)
    reason = backends.unavailable_reason("opencl")
    with pytest.raises(BackendUnavailable) as info:
        create()
    for message in (reason, str(info.value)):
        assert f"MINIDL_OPENCL_DEVICE={selector!r} matches no OpenCL device" in message
        assert "0:0 " in message and names[0] in message   # the devices, as the variable names them
        assert "pip install pyopencl" not in message and "apt-get" not in message


@needs_opencl
def test_minidl_backend_opencl_with_a_wrong_device_names_both_variables(env):
    env(MINIDL_BACKEND="opencl", MINIDL_OPENCL_DEVICE="9:9")
    with pytest.raises(BackendUnavailable) as info:
        backends.get_backend()
    message = str(info.value)
    assert "MINIDL_BACKEND='opencl'" in message and "MINIDL_OPENCL_DEVICE='9:9'" in message
    assert "usable backends here" in message and "numpy" in message


def test_missing_pyopencl_still_says_how_to_install_it(env, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyopencl", None)   # import pyopencl raises ImportError
    reason = backends.unavailable_reason("opencl")
    assert "pip install pyopencl" in reason and "pocl-opencl-icd" in reason


# ---------------------------------------------------------------------------- tuning
def test_listing_and_selecting_backends_neither_tunes_nor_writes(tmp_path):
    home = tmp_path / "home"
    script = ("import minidl, sys; names = minidl.available_backends(); print(names); "
              "'opencl' in names and minidl.set_backend('opencl')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=ROOT,
                          env=dict(os.environ, MINIDL_HOME=str(home), MINIDL_OPENCL_TUNE="1",
                                   PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    assert "numpy" in done.stdout
    assert "tuning" not in done.stderr
    assert not home.exists()


@needs_opencl
def test_the_first_gemm_tunes_and_says_so(env, tmp_path, capsys, monkeypatch):
    from minidl.backends.opencl import create, gemm, tuner

    env(MINIDL_HOME=str(tmp_path), MINIDL_OPENCL_TUNE="1")
    calls = []

    def quick_tune(runtime):
        calls.append(runtime.device_key)
        return {"params": gemm.default_params(runtime), "gflops": 1.0,
                "version": tuner.TUNER_VERSION}

    monkeypatch.setattr(tuner, "tune", quick_tune)
    backend = create()
    assert calls == [] and not (tmp_path / "opencl_tuning.json").exists()
    a = backend.from_numpy(np.eye(3, dtype=np.float32))
    out = backend.empty((3, 3))
    backend.gemm(out, a, a)
    backend.gemm(out, a, a)
    assert len(calls) == 1
    message = capsys.readouterr().err.strip().splitlines()
    assert len(message) == 1 and "tuning the GEMM kernels" in message[0]
    assert "MINIDL_OPENCL_TUNE=0" in message[0] and str(tmp_path) in message[0]
    assert backend.stats()["d2h_count"] == 0   # the tuner's reads are not the user's
    assert calls[0] in json.loads((tmp_path / "opencl_tuning.json").read_text())


@needs_opencl
def test_the_tuner_command_retunes_and_show_only_reads(env, tmp_path, capsys, monkeypatch):
    from minidl.backends.opencl import gemm, tuner

    env(MINIDL_HOME=str(tmp_path))
    stored = tmp_path / "opencl_tuning.json"
    tuner.main(["--show"])
    assert "no current choice stored" in capsys.readouterr().out and not stored.exists()
    gflops = iter([1.0, 2.0])

    def quick_tune(runtime, shapes=None):
        params = gemm.default_params(runtime)
        return {"params": params, "gflops": next(gflops), "shapes": [], "results": [],
                "version": tuner.TUNER_VERSION}

    monkeypatch.setattr(tuner, "tune", quick_tune)
    for expected in (1.0, 2.0):   # a stored choice is replaced: the command re-tunes
        tuner.main([])
        assert list(json.loads(stored.read_text()).values())[0]["gflops"] == expected
    tuner.main(["--show"])
    assert "2.0 GFLOP/s" in capsys.readouterr().out
