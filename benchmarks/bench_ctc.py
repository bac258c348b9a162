"""keras.losses.CTC (forward + backward through the tape) beside PyTorch's
torch.nn.functional.ctc_loss (the same batch, reduction="mean" over the samples as Keras's
sum_over_batch_size), contenders alternated round by round (the machine is shared and noisy);
prints the median milliseconds and the ratio torch / minidl (> 1: minidl faster).

    python benchmarks/bench_ctc.py [--batch 32] [--steps 50] [--classes 20] [--labels 10]
                                   [--rounds 7] [--backend cpu]
"""

import argparse
import statistics
import time

import numpy as np
import torch

import minidl
from minidl import autodiff, losses, ops


def minidl_step(backend, loss, labels, logits):
    tape = autodiff.Tape(backend)
    pred = autodiff.Tensor(logits, backend, requires_grad=True)
    with autodiff.on_backend(backend), autodiff.recording(tape):
        value = loss(labels, pred)
    with autodiff.on_backend(backend):
        tape.gradients([value], [ops.ones((), backend=backend)], [pred])
    backend.synchronize()


def torch_step(labels, lengths, logits):
    logits.grad = None
    # Keras's ctc on torch: log_softmax over the classes, (T, B, C) for ctc_loss, blank 0
    logp = torch.log_softmax(logits, -1).transpose(0, 1)
    value = torch.nn.functional.ctc_loss(logp, labels, lengths[0], lengths[1], blank=0, reduction="none")
    value.mean().backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--labels", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    minidl.set_backend(args.backend)
    backend = minidl.get_backend()
    rng = np.random.default_rng(0)
    host = rng.normal(size=(args.batch, args.steps, args.classes)).astype(np.float32)
    labels = rng.integers(1, args.classes, (args.batch, args.labels)).astype(np.int32)
    labels[:, args.labels // 2:] *= rng.random((args.batch, 1)) < 0.5   # some rows padded with 0
    labels = np.where(np.cumprod(labels != 0, 1) > 0, labels, 0).astype(np.int32)
    logits = backend.from_numpy(host)
    loss = losses.CTC()
    t_logits = torch.tensor(host, requires_grad=True)
    t_labels = torch.tensor(labels, dtype=torch.long)
    lengths = (torch.full((args.batch,), args.steps, dtype=torch.long),
               torch.tensor(np.count_nonzero(labels, 1), dtype=torch.long))
    times = {"minidl": [], "torch": []}
    for _ in range(args.rounds):
        start = time.perf_counter()
        minidl_step(backend, loss, labels, logits)
        times["minidl"].append(time.perf_counter() - start)
        start = time.perf_counter()
        torch_step(t_labels, lengths, t_logits)
        times["torch"].append(time.perf_counter() - start)
    ms = {k: 1000 * statistics.median(v[1:] or v) for k, v in times.items()}
    print(f"CTC forward+backward, batch {args.batch}, {args.steps} steps, {args.classes} classes, "
          f"{args.labels} labels, {args.backend}: minidl {ms['minidl']:.2f} ms, torch {ms['torch']:.2f} ms, "
          f"torch/minidl {ms['torch'] / ms['minidl']:.3f}")


if __name__ == "__main__":
    main()
