"""AMX availability, its switch and what info() says (csrc/amx.c). The AMX kernels' own tests
compare them with their reference twins; here: the gate they all pass through."""

import os
import subprocess
import sys

import pytest

from minidl.backends.cpu._ffi import ffi, lib

pytestmark = pytest.mark.skipif(lib is None, reason="the cpu extension is not built")


def _cpuinfo_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def test_available_matches_the_cpu_flags():
    flags = _cpuinfo_flags()
    if flags is None:
        pytest.skip("no /proc/cpuinfo")
    has_amx = {"amx_tile", "amx_bf16", "amx_int8"} <= flags
    # Linux lists amx_* only when it supports the tile state, and grants the permission then.
    assert bool(lib.minidl_amx_available()) == has_amx
    status = ffi.string(lib.minidl_amx_status()).decode()
    assert status.startswith("amx: ")
    assert ("tiles" in status) == has_amx


def test_switch_and_isa_gate_the_kernels():
    before_isa, was_active = lib.minidl_cpu_isa(), lib.minidl_amx_active()
    try:
        assert lib.minidl_set_amx(0) == 0
        assert lib.minidl_amx_active() == 0
        on_avx512 = lib.minidl_cpu_isa() >= 2    # MINIDL_CPU_ISA may have forced a lower path
        assert lib.minidl_set_amx(1) == (lib.minidl_amx_available() and on_avx512)
        lib.minidl_set_isa(1)    # the avx2 path never runs tiles
        assert lib.minidl_amx_active() == 0
    finally:
        lib.minidl_set_isa(before_isa)
        lib.minidl_set_amx(1 if was_active else 0)


def test_minidl_amx_variable_switches_it_off_and_info_says_so():
    code = ("import minidl; from minidl.backends.cpu._ffi import lib; b = minidl.backends.cpu.create(); "
            "print(lib.minidl_amx_active(), '|', b.info()['amx'])")
    env = dict(os.environ, MINIDL_AMX="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    active, info = out.stdout.strip().split(" | ")
    assert active == "0"
    if lib.minidl_amx_available():
        assert info.endswith("(switched off)")
    else:
        assert not info.endswith("(switched off)")


def test_minidl_amx_words():
    from minidl import settings
    assert settings.read({"MINIDL_AMX": "1"}).amx is True
    assert settings.read({"MINIDL_AMX": "off"}).amx is False
    assert settings.read({}).amx is True
