"""Conv1D on minidl's backends beside PyTorch, alternating the two in the same run.

    python benchmarks/bench_conv1d.py [--backends cpu] [--threads 2] [--rounds 7]

Row: Conv1D 3-tap 256 -> 256 over 1,000 steps, batch 32, padding "same", forward + backward
(input, kernel and bias gradients) through the layer as a model runs it, against nn.Conv1d in
a PyTorch child process (its thread pool would otherwise compete with minidl's). Each round
times minidl, then asks the child to time torch, so both see the same load on a shared machine;
the ratio is of the medians over the rounds (<= 1.0 means minidl is as fast or faster).
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import bench_backends as bench  # noqa: E402  (after the path: this checkout's module)

BATCH, STEPS, CHANNELS, FILTERS, KERNEL = 32, 1000, 256, 256, 3
REPS = 3   # forward + backward passes per timing, per round

TORCH_CHILD = """
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
conv = torch.nn.Conv1d({c}, {f}, {k}, padding="same")
x = torch.randn({n}, {c}, {l}, requires_grad=True)
dout = torch.randn({n}, {f}, {l})
def step():
    y = conv(x)
    y.backward(dout)
step()
print("ready", flush=True)
for line in sys.stdin:
    t0 = time.perf_counter()
    for _ in range({reps}):
        step()
    print((time.perf_counter() - t0) / {reps} * 1e3, flush=True)
""".format(n=BATCH, c=CHANNELS, f=FILTERS, k=KERNEL, l=STEPS, reps=REPS)


def minidl_step(backend_name):
    """A function running one forward + backward of the Conv1D layer on `backend_name`."""
    import minidl
    from minidl import layers
    minidl.set_backend(backend_name)
    layer = layers.Conv1D(FILTERS, KERNEL, padding="same")
    rng = np.random.default_rng(0)
    layer(np.zeros((1, STEPS, CHANNELS), np.float32))   # build and attach
    b = layer.backend
    x = b.from_numpy(rng.standard_normal((BATCH, STEPS, CHANNELS), dtype=np.float32))
    dout = b.from_numpy(rng.standard_normal((BATCH, STEPS, FILTERS), dtype=np.float32))

    from minidl.layers.calls import LayerCall, run_backward, run_forward
    call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step

    def step():
        run_forward(layer, call, x, True)
        run_backward(layer, call, dout, False)
        b.synchronize()
    step()
    return step


def run(backend_names, threads, rounds):
    bench._kernels().minidl_set_num_threads(threads)
    os.environ["MINIDL_NUM_THREADS"] = str(threads)
    child = subprocess.Popen([sys.executable, "-c", TORCH_CHILD, str(threads)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=bench.child_env())
    assert child.stdout.readline().strip() == "ready"
    steps = {name: minidl_step(name) for name in backend_names}
    times = {name: [] for name in backend_names}
    times["torch"] = []
    for _ in range(rounds):
        for name, step in steps.items():
            t0 = time.perf_counter()
            for _ in range(REPS):
                step()
            times[name].append((time.perf_counter() - t0) / REPS * 1e3)
        child.stdin.write("go\n")
        child.stdin.flush()
        times["torch"].append(float(child.stdout.readline()))
    child.stdin.close()
    child.wait()
    torch_ms = float(np.median(times["torch"]))
    print(f"Conv1D {KERNEL}-tap {CHANNELS}->{FILTERS}, {STEPS} steps, batch {BATCH}, forward + backward, "
          f"{threads} threads, {rounds} alternating rounds (median ms)")
    print(f"  torch nn.Conv1d           {torch_ms:8.1f} ms")
    for name in backend_names:
        ms = float(np.median(times[name]))
        print(f"  minidl {name:<18} {ms:8.1f} ms   {ms / torch_ms:5.2f}x torch")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="cpu", help="comma-separated (default cpu)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    run(args.backends.split(","), args.threads, args.rounds)


if __name__ == "__main__":
    main()
