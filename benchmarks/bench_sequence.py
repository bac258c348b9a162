"""LSTM and GRU training steps (forward + backward) on minidl's backends beside PyTorch.

    python benchmarks/bench_sequence.py [--backends cpu] [--threads 2] [--repeats 7]
    python -m minidl.bench --sequence [--backends cpu] [--threads 2]     # the same

The issue-22 sizes: 256 units over 100 steps, batch 64, 128 input features; the loss gradient
is a fixed random tensor of the full output sequence (return_sequences=True). minidl and
torch.nn.LSTM / nn.GRU (batch_first) run in the same process with the same thread count, in
alternation (the machine is shared: each round times every contender once), and the table
gives the median per contender and minidl / torch.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BATCH, STEPS, FEATURES, UNITS = 64, 100, 128, 256


def minidl_step(kind, backend_name):
    """A function running one forward + backward of a `kind` layer on the backend."""
    import numpy as np
    import minidl
    from minidl import layers
    from minidl.layers.calls import LayerCall, run_backward, run_forward
    minidl.set_backend(backend_name)
    b = minidl.get_backend()
    layer = getattr(layers, kind)(UNITS, return_sequences=True)
    layer.build_once((STEPS, FEATURES))
    layer.attach(b)
    rng = np.random.default_rng(0)
    x = b.from_numpy(rng.standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32))
    dout = b.from_numpy(rng.standard_normal((BATCH, STEPS, UNITS)).astype(np.float32))
    call = LayerCall(layer, b)   # one call's context, as a model's graph step holds

    def step():
        run_forward(layer, call, x, True)
        run_backward(layer, call, dout, False)
        b.synchronize()
    return step


def torch_step(kind):
    import torch
    module = getattr(torch.nn, kind)(FEATURES, UNITS, batch_first=True)
    x = torch.randn(BATCH, STEPS, FEATURES, requires_grad=True)
    dout = torch.randn(BATCH, STEPS, UNITS)

    def step():
        out, _ = module(x)
        out.backward(dout)
    return step


def run(backends, threads, repeats=7):
    """Print the table for the minidl `backends` (names) with `threads` threads each."""
    os.environ["MINIDL_NUM_THREADS"] = str(threads)   # read when the cpu kernels load
    from minidl.backends.cpu._ffi import lib
    if lib is not None:                                # and set now, if they had loaded
        lib.minidl_set_num_threads(threads)
    import torch
    torch.set_num_threads(threads)
    for kind in ("LSTM", "GRU"):
        contenders = {"torch": torch_step(kind)}
        for name in backends:
            contenders[name] = minidl_step(kind, name)
        times = {name: [] for name in contenders}
        for step in contenders.values():   # warm-up: buffers, kernels, caches
            step()
        for _ in range(repeats):
            for name, step in contenders.items():
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
        base = statistics.median(times["torch"])
        print(f"{kind}({UNITS}) T={STEPS} N={BATCH} in={FEATURES}, forward + backward, "
              f"{threads} threads:")
        for name, values in times.items():
            ms = statistics.median(values) * 1e3
            print(f"  {name:8s} {ms:8.1f} ms   {ms / (base * 1e3):5.2f}x torch")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="cpu", help="comma-separated minidl backends")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    run([n.strip() for n in args.backends.split(",") if n.strip()], args.threads, args.repeats)


if __name__ == "__main__":
    main()
