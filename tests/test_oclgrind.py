"""Every OpenCL kernel under Oclgrind, the OpenCL device simulator that reports data races,
out-of-bounds and uninitialized accesses, barrier divergence and API misuse.

tests/_oclgrind_ops.py runs a subset of tests/test_ops.py's table (the cheapest row of each op
and each op's cheapest NaN row, plus rows chosen to reach every kernel) on the GPU profile, then
on the CPU profile, and a split-K product, comparing results with the numpy reference.
This test runs it under `oclgrind --data-races --uninitialized --check-api` (1-2 minutes)
and wants no error reported, no row failing, and every __kernel of kernels/*.cl launched.
Skipped where Oclgrind is not installed (Debian/Ubuntu: apt-get install oclgrind).
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

HERE = os.path.dirname(os.path.abspath(__file__))
OCLGRIND_CHECKS = ("--data-races", "--uninitialized", "--check-api")
TIMEOUT_S = 400
# pyopencl's Program.build asks every device for an info field Oclgrind 21.10 does not know (and
# handles the refusal): the one API error expected, once per program built.
PYOPENCL_PROBE = re.compile(r"Oclgrind - OpenCL runtime error detected\s+Function: clGetDeviceInfo\s+"
                            r"Error:\s+CL_INVALID_VALUE\s+For argument 'param_name'\s*")


def api_errors(text):
    """The Oclgrind reports in `text` (its API errors, fatal errors) other than pyopencl's
    expected probe; compiler output (a kernels file that does not build alone) is not one."""
    rest = PYOPENCL_PROBE.sub("", text)
    return [block for block in rest.split("\n\n") if "oclgrind" in block.lower()]


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
def test_every_kernel_runs_clean_under_oclgrind(tmp_path):
    log, census = tmp_path / "oclgrind.log", tmp_path / "census.json"
    env = dict(os.environ, MINIDL_OPENCL_PROFILE="gpu", MINIDL_OPENCL_TUNE="0",
               MINIDL_OPENCL_BUILD_OPTIONS="-cl-opt-disable", PYOPENCL_NO_CACHE="1",
               MINIDL_HOME=str(tmp_path))
    env.pop("MINIDL_OPENCL_DEVICE", None)   # the wrapper's runtime has Oclgrind's device only
    command = ["oclgrind", *OCLGRIND_CHECKS, "--log", str(log), sys.executable,
               os.path.join(HERE, "_oclgrind_ops.py"), "--out", str(census)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          cwd=os.path.dirname(HERE))
    output = done.stdout + done.stderr
    kernel_errors = log.read_text() if log.exists() else ""
    assert kernel_errors.strip() == "", f"Oclgrind reported:\n{kernel_errors[:4000]}"
    assert api_errors(output) == [], output[-4000:]
    assert done.returncode in (0, 1) and census.exists(), output[-4000:]
    result = json.loads(census.read_text())
    assert result["failed"] == [], result["failed"]
    assert done.returncode == 0
    missing = sorted(set(result["defined"]) - set(result["launched"]))
    assert missing == [], (f"kernels no row of tests/_oclgrind_ops.py launches: {missing}; "
                           f"add a tests/test_ops.py row that reaches them to its EXTRA_ROWS")


def test_the_expected_pyopencl_probe_is_all_that_is_left_out():
    probe = ("\nOclgrind - OpenCL runtime error detected\n\tFunction: clGetDeviceInfo\n"
             "\tError:    CL_INVALID_VALUE\n\tFor argument 'param_name'\n\n")
    other = ("\nOclgrind - OpenCL runtime error detected\n\tFunction: clEnqueueNDRangeKernel\n"
             "\tError:    CL_INVALID_WORK_GROUP_SIZE\n\n")
    assert api_errors("tuned 3 rows\n" + probe * 3 + "\n1 error generated.\n\n") == []
    assert len(api_errors(probe + other + probe)) == 1


def launched_loads(text):
    """[kernel, bytes loaded from global memory] per launch, from `oclgrind --inst-counts`."""
    blocks = re.split(r"Instructions executed for kernel '(\w+)':", text)[1:]
    loads = []
    for name, body in zip(blocks[::2], blocks[1::2]):
        found = re.search(r"load global \((\d+) bytes\)", body)
        loads.append([name, int(found.group(1)) if found else 0])
    return loads


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed")
def test_direct_convolutions_load_what_the_traffic_formulas_say(tmp_path):
    """benchmarks/opencl_traffic.py's figures come from traffic.py's formulas: Oclgrind counts the
    bytes each launch of the direct convolutions really loads, and they must agree exactly."""
    env = dict(os.environ, MINIDL_OPENCL_PROFILE="gpu", MINIDL_OPENCL_TUNE="0",
               MINIDL_OPENCL_BUILD_OPTIONS="-cl-opt-disable", PYOPENCL_NO_CACHE="1",
               MINIDL_HOME=str(tmp_path))
    env.pop("MINIDL_OPENCL_DEVICE", None)
    done = subprocess.run(["oclgrind", "--inst-counts", sys.executable,
                           os.path.join(HERE, "_oclgrind_conv_loads.py")], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S, cwd=os.path.dirname(HERE))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    expected = [e for e in json.loads(done.stdout.strip().splitlines()[-1]) if e is not None]
    names = {name for name, _ in expected}
    measured = [entry for entry in launched_loads(output) if entry[0] in names]
    assert len(expected) >= 8 and measured == expected


def test_launched_loads_reads_oclgrind_instruction_counts():
    text = ("Instructions executed for kernel 'a':\n   12 - load private (48 bytes)\n"
            "   3 - load global (12 bytes)\nInstructions executed for kernel 'b':\n   1 - br\n")
    assert launched_loads(text) == [["a", 12], ["b", 0]]
