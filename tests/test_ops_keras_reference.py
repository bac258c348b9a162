"""minidl.ops against real Keras 3.15.1: every case of tests/keras_reference/cases.py on every
backend, outputs (and, for grad cases, gradients) compared with the values Keras computed
(tests/keras_reference/ops_reference.npz, written by make_reference.py; Keras is not needed
here). Booleans are compared as 1.0 / 0.0 (minidl's comparisons return float32)."""

import os
import sys

import numpy as np
import pytest

from minidl import autodiff, ops
from minidl.autodiff import Tensor

from conftest import cpu_isas_here

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference")
sys.path.insert(0, HERE)
from cases import CASES  # noqa: E402

REFERENCE = dict(np.load(os.path.join(HERE, "ops_reference.npz")))


def flatten(result):
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in flatten(item)]
    return [result]


def to_numpy(leaf):
    return np.asarray(ops.convert_to_numpy(leaf) if ops.is_tensor(leaf) else leaf)


def tensors_on(backend, inputs, requires_grad=False):
    out = []
    for x in inputs:
        if isinstance(x, np.ndarray) and x.dtype.kind in "fiub":
            t = ops.convert_to_tensor(x, backend=backend)
            if requires_grad and x.dtype.kind == "f":
                t = Tensor(t.value, backend, requires_grad=True)
            out.append(t)
        else:
            out.append(x)
    return out


def check(name, got, want, tol, what):
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, f"{name} {what}: shape {got.shape}, Keras {want.shape}"
    if want.dtype.kind in "iu":
        assert got.dtype.kind in "iu", f"{name} {what}: dtype {got.dtype}, Keras {want.dtype}"
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol,
                               equal_nan=True, err_msg=f"{name} {what}")


# These ops are compositions of backend ops whose kernels test_ops.py checks on every ISA path:
# here numpy, the cpu backend on this machine's best path, and opencl (outputs only: the
# gradients are the same compositions).
BACKENDS = ["numpy", f"cpu-{cpu_isas_here()[-1]}", "opencl"]


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_matches_keras(backend, index):
    name, fn, inputs, tol, grad, numpy_reference = CASES[index]
    if f"{name}/error" in REFERENCE:
        pytest.skip(f"Keras rejects this case: {REFERENCE[name + '/error']}")
    with autodiff.on_backend(backend):
        leaves = flatten(fn(ops, *tensors_on(backend, inputs)))
        want = [REFERENCE[f"{name}/{k}"] for k in range(len(leaves)) if f"{name}/{k}" in REFERENCE]
        if numpy_reference is not None:   # Keras's torch backend is wrong here (see the case)
            want = flatten(numpy_reference(*inputs))
        assert len(want) == len(leaves), f"{name}: {len(leaves)} outputs, Keras {len(want)}"
        for k, (leaf, ref) in enumerate(zip(leaves, want)):
            check(name, to_numpy(leaf), ref, tol, f"output {k}")
        if not grad or backend.name == "opencl":
            return
        tape = autodiff.Tape(backend)
        ts = tensors_on(backend, inputs, requires_grad=True)
        with autodiff.recording(tape):
            outs = [leaf for leaf in flatten(fn(ops, *ts)) if ops.is_tensor(leaf) and leaf.dtype == "float32"]
        sources = [t for t in ts if isinstance(t, Tensor) and t.requires_grad]
        grads = tape.gradients(outs, [ops.ones_like(o) for o in outs], sources)
        k_of = [k for k, t in enumerate(ts) if isinstance(t, Tensor) and t.requires_grad]
        for k, g, t in zip(k_of, grads, sources):
            got = np.zeros(t.shape, np.float32) if g is None else to_numpy(g)
            check(name, got, REFERENCE[f"{name}/grad/{k}"], max(tol, 1e-4), f"gradient of input {k}")
