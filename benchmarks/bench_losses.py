"""A loss called directly, loss(y_true, y_pred), forward + backward through the tape: the
backend's fused kernels (what minidl.losses runs) beside the same loss composed from minidl.ops
(the formula the loss functions used before they ran the kernels) and beside PyTorch's
torch.nn.functional, same size, contenders alternated round by round (the machine is shared
and noisy). Prints the median milliseconds and the ratios (> 1: the kernels are faster).

    python benchmarks/bench_losses.py [--shape 256 1000] [--rounds 15] [--backend cpu]
"""

import argparse
import math
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as TF

import minidl
from minidl import autodiff, losses, ops


def _composed_huber(t, p, delta=1.0):
    error = ops.abs(p - t)
    quadratic = ops.minimum(error, delta)
    return ops.mean(0.5 * quadratic * quadratic + delta * (error - quadratic), axis=-1)


def _composed_log_cosh(t, p):
    error = p - t
    return ops.mean(error + ops.softplus(-2.0 * error) - math.log(2.0), axis=-1)


# (name, the loss object, the ops-composed per-sample formula, torch's loss, targets' kind)
CASES = [
    ("sparse_cce_logits", losses.SparseCategoricalCrossentropy(from_logits=True),
     lambda t, p: ops.sparse_categorical_crossentropy(t, p, from_logits=True),
     lambda t, p: TF.cross_entropy(p, t), "labels"),
    ("cce_probabilities", losses.CategoricalCrossentropy(),
     lambda t, p: ops.categorical_crossentropy(t, p),
     lambda t, p: -(t * torch.log(torch.clamp(p / p.sum(-1, keepdim=True), 1e-7, 1 - 1e-7))).sum(-1).mean(),
     "onehot_probs"),
    ("bce_logits", losses.BinaryCrossentropy(from_logits=True),
     lambda t, p: ops.mean(ops.binary_crossentropy(t, p, from_logits=True), axis=-1),
     lambda t, p: TF.binary_cross_entropy_with_logits(p, t), "binary"),
    ("mse", losses.MeanSquaredError(), lambda t, p: ops.mean(ops.square(p - t), axis=-1),
     lambda t, p: TF.mse_loss(p, t), "dense"),
    ("mae", losses.MeanAbsoluteError(), lambda t, p: ops.mean(ops.abs(p - t), axis=-1),
     lambda t, p: TF.l1_loss(p, t), "dense"),
    ("huber", losses.Huber(), _composed_huber, lambda t, p: TF.huber_loss(p, t), "dense"),
    ("log_cosh", losses.LogCosh(), _composed_log_cosh,
     lambda t, p: (p - t + TF.softplus(-2.0 * (p - t)) - math.log(2.0)).mean(), "dense"),
]


def _data(kind, rng, shape):
    logits = rng.normal(size=shape).astype(np.float32)
    labels = rng.integers(0, shape[-1], shape[0])
    if kind == "labels":
        return labels.astype(np.int32), logits, torch.tensor(labels)
    if kind == "onehot_probs":
        onehot = np.eye(shape[-1], dtype=np.float32)[labels]
        probs = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float32)
        return onehot, probs, torch.tensor(onehot)
    if kind == "binary":
        t = (rng.random(shape) > 0.5).astype(np.float32)
        return t, logits, torch.tensor(t)
    t = rng.normal(size=shape).astype(np.float32)
    return t, logits, torch.tensor(t)


def minidl_step(backend, fn, y_true, pred):
    tape = autodiff.Tape(backend)
    xt = autodiff.Tensor(pred, backend, requires_grad=True)
    with autodiff.on_backend(backend), autodiff.recording(tape):
        value = fn(y_true, xt)
    with autodiff.on_backend(backend):
        tape.gradients([value], [ops.ones((), backend=backend)], [xt])
    backend.synchronize()


def torch_step(fn, t, p):
    p.grad = None
    fn(t, p).backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", type=int, nargs=2, default=(256, 1000))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    minidl.set_backend(args.backend)
    backend = minidl.get_backend()
    rng = np.random.default_rng(0)
    print(f"loss(y_true, y_pred) forward + backward of {tuple(args.shape)} float32, median of {args.rounds} "
          f"rounds, minidl {args.backend} vs torch {torch.__version__} ({torch.get_num_threads()} threads)")
    print(f"{'loss':18s} {'kernels':>9s} {'composed':>9s} {'torch':>9s}  composed/kernels  torch/kernels")
    for name, loss, composed, torch_fn, kind in CASES:
        host_true, host_pred, torch_true = _data(kind, rng, args.shape)
        y_true = ops.convert_to_tensor(host_true, backend=backend)
        pred = backend.from_numpy(host_pred)
        torch_pred = torch.tensor(host_pred, requires_grad=True)
        contenders = {"kernels": lambda: minidl_step(backend, loss, y_true, pred),
                      "composed": lambda: minidl_step(backend, lambda t, p: ops.mean(composed(t, p)), y_true, pred),
                      "torch": lambda: torch_step(torch_fn, torch_true, torch_pred)}
        times = {who: [] for who in contenders}
        for _ in range(args.rounds):
            for who, run in contenders.items():
                start = time.perf_counter()
                run()
                times[who].append(time.perf_counter() - start)
        ms = {who: statistics.median(t) * 1e3 for who, t in times.items()}
        print(f"{name:18s} {ms['kernels']:9.3f} {ms['composed']:9.3f} {ms['torch']:9.3f}  "
              f"{ms['composed'] / ms['kernels']:16.2f}x {ms['torch'] / ms['kernels']:13.2f}x")


if __name__ == "__main__":
    main()
