"""minidl.activations as functions (forward + backward through the tape) beside PyTorch's
torch.nn.functional, same tensor size, contenders alternated round by round (the machine is
shared and noisy); prints the median milliseconds and the ratio torch / minidl (> 1: minidl
faster).

    python benchmarks/bench_activation_functions.py [--shape 256 4096] [--rounds 15] [--backend cpu]
"""

import argparse
import statistics
import time

import numpy as np
import torch

import minidl
from minidl import activations, autodiff, ops

CASES = [("relu", {}, torch.relu), ("gelu", {}, torch.nn.functional.gelu),
         ("silu", {}, torch.nn.functional.silu), ("softmax", {}, lambda t: torch.softmax(t, -1)),
         ("celu", {}, torch.nn.functional.celu), ("hard_tanh", {}, torch.nn.functional.hardtanh),
         ("sparse_plus", {}, None), ("log_softmax", {}, lambda t: torch.log_softmax(t, -1))]


def minidl_step(backend, fn, x, g):
    tape = autodiff.Tape(backend)
    xt = autodiff.Tensor(x, backend, requires_grad=True)
    with autodiff.on_backend(backend), autodiff.recording(tape):
        y = fn(xt)
    with autodiff.on_backend(backend):
        tape.gradients([y], [g], [xt])
    backend.synchronize()


def torch_step(fn, x, g):
    x.grad = None
    fn(x).backward(g)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", type=int, nargs=2, default=(256, 4096))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    minidl.set_backend(args.backend)
    backend = minidl.get_backend()
    rng = np.random.default_rng(0)
    host = rng.normal(size=args.shape).astype(np.float32)
    x, g = backend.from_numpy(host), ops.convert_to_tensor(rng.normal(size=args.shape), backend=backend)
    tx = torch.tensor(host, requires_grad=True)
    tg = torch.tensor(rng.normal(size=args.shape).astype(np.float32))
    print(f"forward + backward of {tuple(args.shape)} float32, median of {args.rounds} rounds, "
          f"minidl {args.backend} vs torch {torch.__version__} ({torch.get_num_threads()} threads)")
    for name, kwargs, torch_fn in CASES:
        fn = getattr(activations, name)
        times = {"minidl": [], "torch": []}
        for _ in range(args.rounds):
            for who in ("minidl", "torch") if torch_fn else ("minidl",):
                start = time.perf_counter()
                if who == "minidl":
                    minidl_step(backend, fn, x, g)
                else:
                    torch_step(torch_fn, tx, tg)
                times[who].append(time.perf_counter() - start)
        ours = statistics.median(times["minidl"]) * 1e3
        line = f"{name:12s} minidl {ours:7.2f} ms"
        if torch_fn:
            theirs = statistics.median(times["torch"]) * 1e3
            line += f"   torch {theirs:7.2f} ms   torch/minidl {theirs / ours:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
