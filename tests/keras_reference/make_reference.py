"""Writes ops_reference.npz: real Keras's outputs (and gradients) for every case of cases.py.
Run in a venv with Keras 3.15.1 and torch (never by the test suite):

    KERAS_BACKEND=torch python tests/keras_reference/make_reference.py

Keys: "<case>/<k>" for the k-th output (nested tuples flattened, booleans as float32),
"<case>/grad/<k>" for d(sum of the float outputs)/d(k-th input), "<case>/error" for a case
Keras rejects (the message)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import torch  # noqa: E402
from keras import ops  # noqa: E402

from cases import CASES  # noqa: E402


def flatten(result):
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in flatten(item)]
    return [result]


def main():
    assert keras.__version__ == "3.15.1" and keras.backend.backend() == "torch", keras.__version__
    out = {}
    for name, fn, inputs, _, grad, _ in CASES:
        try:
            leaves = flatten(fn(ops, *inputs))
            for k, leaf in enumerate(leaves):
                value = np.asarray(ops.convert_to_numpy(leaf))
                out[f"{name}/{k}"] = value.astype(np.float32) if value.dtype == bool else value
            if grad:
                ts = [torch.tensor(x, requires_grad=x.dtype.kind == "f") if isinstance(x, np.ndarray) and x.dtype.kind == "f"
                      else x for x in inputs]
                total = sum(leaf.float().sum() for leaf in flatten(fn(ops, *ts))
                            if torch.is_tensor(leaf) and leaf.dtype.is_floating_point)
                total.backward()
                for k, t in enumerate(ts):
                    if torch.is_tensor(t) and t.requires_grad:
                        g = t.grad if t.grad is not None else torch.zeros_like(t)
                        out[f"{name}/grad/{k}"] = g.numpy()
        except Exception as exc:  # noqa: BLE001 - recorded, the test skips the case
            out[f"{name}/error"] = np.asarray(f"{type(exc).__name__}: {exc}"[:300])
            print("keras rejects", name, type(exc).__name__, str(exc)[:200])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops_reference.npz")
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **out)
    os.replace(tmp, path)
    print(len(CASES), "cases,", len(out), "arrays ->", path)


if __name__ == "__main__":
    main()
