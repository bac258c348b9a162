"""Depthwise and pointwise convolutions of MobileNetV2 (batch 64) on minidl's backends beside PyTorch.

    python benchmarks/bench_depthwise.py [--backends cpu] [--threads N] [--json out.json]
    python -m minidl.bench --depthwise [--backends cpu] [--threads N]     # the same

For each layer: forward, backward-data and backward-filter (with the bias gradient) in ms on
each backend, and in PyTorch (a child process with torch.set_num_threads(threads)) both in its
native NCHW layout and in channels_last; "vs torch" divides minidl's forward + backward total
by the faster of the two torch layouts.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import bench_backends as bench  # noqa: E402  (after the path: this checkout's module)

BATCH = 64
# (label, input (N, H, W, C), kernel (KH, KW), strides, filters): MobileNetV2's expanded
# 144-channel block; filters None is a depthwise layer (multiplier 1), a number a plain Conv2D
# (the block's 1x1 projection 144 -> 24, which SeparableConv2D and MobileNetV2 run as Conv2D)
LAYERS = (
    ("dw 3x3 56x56x144 s1", (BATCH, 56, 56, 144), (3, 3), 1, None),
    ("dw 3x3 56x56x144 s2", (BATCH, 56, 56, 144), (3, 3), 2, None),
    ("pw 1x1 56x56 144->24", (BATCH, 56, 56, 144), (1, 1), 1, 24),
)
PASSES = ("forward", "backward_data", "backward_filter")


def backend_ms(backend, in_shape, kernel, stride, filters=None):
    """{pass: ms} of one same-padded layer with a bias on `backend`: depthwise (multiplier 1)
    when filters is None, else a Conv2D with that many filters."""
    rng = np.random.default_rng(0)
    if filters is None:
        kernel_shape = kernel + (in_shape[3], 1)
        plan = backend.depthwise_conv2d_plan(in_shape, kernel_shape, (stride, stride), "same")
        ops = (backend.depthwise_conv2d_forward, backend.depthwise_conv2d_backward_data,
               backend.depthwise_conv2d_backward_filter)
    else:
        kernel_shape = kernel + (in_shape[3], filters)
        plan = backend.conv2d_plan(in_shape, kernel_shape, (stride, stride), "same")
        ops = (backend.conv2d_forward, backend.conv2d_backward_data, backend.conv2d_backward_filter)
    forward, backward_data, backward_filter = ops
    x = backend.from_numpy(rng.standard_normal(in_shape, dtype=np.float32))
    w = backend.from_numpy(rng.standard_normal(kernel_shape, dtype=np.float32) * 0.1)
    bias = backend.from_numpy(np.zeros(plan.oc, np.float32))
    out, dout = backend.empty(plan.out_shape), backend.from_numpy(
        rng.standard_normal(plan.out_shape, dtype=np.float32))
    dx, dw, db = backend.empty(in_shape), backend.empty(kernel_shape), backend.empty((plan.oc,))

    def timed(fn):
        def run():
            fn()
            backend.synchronize()
        return 1e3 * bench.median_seconds(run)
    return {"forward": timed(lambda: forward(out, x, w, bias, plan)),
            "backward_data": timed(lambda: backward_data(dx, dout, w, plan)),
            "backward_filter": timed(lambda: backward_filter(dw, db, dout, x, plan))}


def torch_ms(threads):
    """Child-process entry point: {layer: {layout: {pass: ms}}} in PyTorch, or None without it."""
    torch = bench._import_torch(threads)
    if torch is None:
        return None
    result = {}
    for label, (n, h, w, c), (kh, kw), stride, filters in LAYERS:
        result[label] = {}
        groups, f = (c, c) if filters is None else (1, filters)
        for layout in ("nchw", "channels_last"):
            fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
            x = torch.randn(n, c, h, w).contiguous(memory_format=fmt)
            weight = (torch.randn(f, c // groups, kh, kw) * 0.1).contiguous(memory_format=fmt)
            bias = torch.zeros(f)
            pad = [kh // 2, kw // 2]
            with torch.no_grad():
                out = torch.nn.functional.conv2d(x, weight, bias, stride, pad, 1, groups)
                dout = torch.randn_like(out)

                def backward(mask):
                    torch.ops.aten.convolution_backward(dout, x, weight, [f], [stride, stride], pad,
                                                        [1, 1], False, [0, 0], groups, mask)
                result[label][layout] = {
                    "forward": 1e3 * bench.median_seconds(
                        lambda: torch.nn.functional.conv2d(x, weight, bias, stride, pad, 1, groups)),
                    "backward_data": 1e3 * bench.median_seconds(lambda: backward([True, False, False])),
                    "backward_filter": 1e3 * bench.median_seconds(lambda: backward([False, True, True]))}
    return {"version": torch.__version__, "ms": result}


def torch_in_child(threads):
    """torch_ms(threads) in a child process (torch's thread pool would steal the cores of the
    kernels measured after it), with the environment bench_backends gives torch."""
    code = (bench.CHILD_PRELUDE + "import json, bench_depthwise; "
            f"print(json.dumps(bench_depthwise.torch_ms({threads})))")
    result = subprocess.run([sys.executable, "-c", code], env=bench.child_env(), capture_output=True,
                            text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"torch depthwise benchmark failed: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(backend_names, threads, json_path=None):
    bench._kernels().minidl_set_num_threads(threads)
    os.environ["MINIDL_NUM_THREADS"] = str(threads)
    torch = torch_in_child(threads)
    backends = {name: bench.get_backend(name) for name in backend_names}
    report = {"threads": threads, "torch": torch and torch["version"], "ms": {}}
    rows = []
    for label, in_shape, kernel, stride, filters in LAYERS:
        entry = report["ms"][label] = {name: backend_ms(b, in_shape, kernel, stride, filters)
                                       for name, b in backends.items()}
        best_torch = None
        if torch is not None:
            for layout, times in torch["ms"][label].items():
                entry[f"torch {layout}"] = times
            best_torch = min(sum(t.values()) for t in torch["ms"][label].values())
        for name, times in entry.items():
            total = sum(times[p] for p in PASSES)
            ratio = f"{total / best_torch:.2f}" if best_torch and not name.startswith("torch") else ""
            rows.append([label, name] + [f"{times[p]:.2f}" for p in PASSES] + [f"{total:.2f}", ratio])
    bench._print_table(f"Depthwise and pointwise convolutions of MobileNetV2, batch {BATCH}, {threads} threads, ms",
                       ["layer", "backend", "fwd", "bwd-data", "bwd-filter", "total", "vs torch"], rows)
    if json_path:
        from minidl.io import atomic_write
        with atomic_write(json_path, "w") as f:
            json.dump(report, f, indent=2)
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="benchmarks/bench_depthwise.py", description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="cpu", help="comma-separated backend names (default: cpu)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for every contender (default: MINIDL_NUM_THREADS or all cores)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    threads = args.threads or bench.kernel_threads()
    run([n.strip() for n in args.backends.split(",") if n.strip()], threads, args.json)


if __name__ == "__main__":
    main()
