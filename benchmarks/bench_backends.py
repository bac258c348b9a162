"""Benchmarks of minidl's backends, side by side with numpy and PyTorch, in one run.

    python benchmarks/bench_backends.py [--json out.json] [--backends cpu,opencl,numpy] [--steps N]
                                        [--memory] [--threads N] [--clock wall|cpu] [--torch-passive]
    python -m minidl.bench ...            # the same, from a source checkout
    python -m minidl.bench --depthwise    # only MobileNetV2's depthwise convolutions (bench_depthwise.py)
    python -m minidl.bench --sequence     # only the sequence layers beside torch (bench_sequence.py, bench_conv1d.py)
    python -m minidl.bench --binary       # only binary (xnor-popcount) inference (bench_binary.py)

Reports:
  * the machine's peak FP32 rate, measured here with an FMA loop on every kernel thread;
  * SGEMM GFLOP/s for 256/512/1024/2048 squares on each backend and with numpy's matmul
    (in this process, and in a child process without OPENBLAS_CORETYPE when that variable
    is set, since it changes which OpenBLAS kernels numpy uses);
  * each conv layer of the Keras CIFAR-10 CNN (batch 128): forward, backward-data and
    backward-filter in ms, next to torch's (torch.set_num_threads(kernel threads));
  * a Conv2DTranspose layer (3x3, stride 2, 16x16x64 -> 32x32x64, batch 64): forward and
    backward ms next to torch's conv_transpose2d;
  * the whole CNN training step (ms, images/s) on each backend and in PyTorch;
  * with --memory, the peak resident memory of a 200-step training run of each, measured
    in child processes.
Timings are medians over repeated runs after a warm-up (the CNN step also reports the best
step). numpy's and torch's figures are measured in child processes: their BLAS and OpenMP
thread pools keep spinning after a call and would otherwise steal the cores from the
kernels measured next. Every contender gets the same thread count (--threads, default the
cpu backend's: MINIDL_NUM_THREADS or all cores). On a machine shared with other jobs,
`--threads 1 --clock cpu` times with the process CPU clock, which other jobs do not inflate.
The cpu backend's OpenMP threads wait passively (minidl/backends/cpu/_ffi.py); torch's
child processes run with torch's own default.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)  # this checkout's minidl, as examples/ and the child processes use
# what a child process runs first to import this module (it is not part of the package)
CHILD_PRELUDE = f"import sys; sys.path[:0] = [{HERE!r}, {REPO!r}]; import bench_backends as bench; "

GEMM_SIZES = (256, 512, 1024, 2048)
CNN_BATCH = 128
CNN_INPUT = (32, 32, 3)
# The conv layers of Keras's cifar10_cnn example: (input (N, H, W, C), kernel (KH, KW, C, F), padding)
CNN_CONVS = (
    ("conv1 3->32 same", (CNN_BATCH, 32, 32, 3), (3, 3, 3, 32), "same"),
    ("conv2 32->32 valid", (CNN_BATCH, 32, 32, 32), (3, 3, 32, 32), "valid"),
    ("conv3 32->64 same", (CNN_BATCH, 15, 15, 32), (3, 3, 32, 64), "same"),
    ("conv4 64->64 valid", (CNN_BATCH, 15, 15, 64), (3, 3, 64, 64), "valid"),
)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def set_clock(name):
    """Time with the wall clock ("wall") or this process's CPU time ("cpu", single-threaded runs only)."""
    global _clock
    _clock = CLOCKS[name]


def median_seconds(fn, min_seconds=0.4, min_runs=3, max_runs=200):
    """Median time of fn() over at least min_runs calls and min_seconds, after one warm-up call."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < min_seconds):
        t0 = _clock()
        fn()
        times.append(_clock() - t0)
    return float(np.median(times))


def _kernels():
    from minidl.backends.cpu._ffi import require_lib
    return require_lib()


def kernel_threads():
    return int(_kernels().minidl_num_threads())


def machine_info():
    from minidl.backends.cpu._ffi import ffi
    lib = _kernels()
    return {"isa": ffi.string(lib.minidl_cpu_isa_name()).decode(),
            "gemm_kernel": ffi.string(lib.minidl_sgemm_kernel_name()).decode(),
            "threads": int(lib.minidl_num_threads()), "cores": os.cpu_count(),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE")}


def peak_gflops(duration_ms=500):
    """The measured FP32 peak with the widest ISA this CPU has, on all kernel threads."""
    lib = _kernels()
    return float(lib.minidl_peak_gflops(duration_ms, lib.minidl_cpu_best_isa()))


def get_backend(name):
    """The backend `name` from the registry (raising BackendUnavailable with the reason)."""
    from minidl.backends import set_backend
    return set_backend(name)


# ----------------------------------------------------------------- sgemm

def numpy_gemm_gflops(sizes=GEMM_SIZES, clock="wall"):
    set_clock(clock)
    rng = np.random.default_rng(0)
    result = {}
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out = np.empty((n, n), np.float32)
        result[n] = 2.0 * n ** 3 / median_seconds(lambda: np.matmul(a, b, out=out)) / 1e9
    return result


def child_env(**overrides):
    """The environment for a child process: ours, without the OpenMP wait policy the cpu
    backend chose for itself (so torch runs with its own default), plus overrides."""
    from minidl.backends.cpu import _ffi
    env = dict(os.environ)
    if _ffi.WAIT_POLICY_CHOSEN_HERE:
        env.pop("OMP_WAIT_POLICY", None)
    env.update(overrides)
    return env


def run_in_child(call, env=None):
    """The JSON printed by `call` (Python source using this module as `bench`) run in a child."""
    code = CHILD_PRELUDE + f"import json; print(json.dumps(bench.{call}))"
    result = subprocess.run([sys.executable, "-c", code], env=child_env() if env is None else env,
                            capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"child benchmark {call} failed: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def numpy_gemm_gflops_in_child(threads, clock, drop_coretype=False):
    """numpy's SGEMM rates measured in a child process using `threads` OpenBLAS threads,
    optionally without the OPENBLAS_CORETYPE override of this environment."""
    env = child_env(OPENBLAS_NUM_THREADS=str(threads))
    if drop_coretype:
        env.pop("OPENBLAS_CORETYPE", None)
    return {int(k): v for k, v in run_in_child(f"numpy_gemm_gflops(clock={clock!r})", env).items()}


def backend_gemm_gflops(backend, sizes=GEMM_SIZES):
    rng = np.random.default_rng(0)
    result = {}
    for n in sizes:
        a = backend.from_numpy(rng.standard_normal((n, n), dtype=np.float32))
        b = backend.from_numpy(rng.standard_normal((n, n), dtype=np.float32))
        out = backend.empty((n, n))

        def run():
            backend.gemm(out, a, b)
            backend.synchronize()
        result[n] = 2.0 * n ** 3 / median_seconds(run) / 1e9
    return result


# ------------------------------------------------------- conv layer ops

def conv_flops(plan):
    """Multiply-adds x 2 of one conv pass (forward, backward-data and backward-filter all cost this)."""
    return 2.0 * plan.n * plan.oh * plan.ow * plan.oc * plan.kh * plan.kw * plan.c


def backend_conv_ms(backend, in_shape, kernel_shape, padding):
    """(forward, backward-data, backward-filter) ms of one conv layer on `backend`."""
    rng = np.random.default_rng(0)
    plan = backend.conv2d_plan(in_shape, kernel_shape, (1, 1), padding)
    x = backend.from_numpy(rng.standard_normal(in_shape, dtype=np.float32))
    w = backend.from_numpy(rng.standard_normal(kernel_shape, dtype=np.float32) * 0.1)
    bias = backend.from_numpy(np.zeros(kernel_shape[3], np.float32))
    out, dout = backend.empty(plan.out_shape), backend.from_numpy(
        rng.standard_normal(plan.out_shape, dtype=np.float32))
    dx, dw, db = backend.empty(in_shape), backend.empty(kernel_shape), backend.empty((kernel_shape[3],))

    def timed(fn):
        def run():
            fn()
            backend.synchronize()
        return 1e3 * median_seconds(run)
    return (timed(lambda: backend.conv2d_forward(out, x, w, bias, plan)),
            timed(lambda: backend.conv2d_backward_data(dx, dout, w, plan)),
            timed(lambda: backend.conv2d_backward_filter(dw, db, dout, x, plan)),
            conv_flops(plan))


def torch_conv_ms(torch, in_shape, kernel_shape, padding):
    """The same three passes in PyTorch (its native NCHW layout, oneDNN kernels)."""
    n, h, w, c = in_shape
    f = kernel_shape[3]
    x = torch.randn(n, c, h, w)
    weight = torch.randn(f, c, kernel_shape[0], kernel_shape[1]) * 0.1
    bias = torch.zeros(f)
    pad = (kernel_shape[0] // 2, kernel_shape[1] // 2) if padding == "same" else (0, 0)
    with torch.no_grad():
        out = torch.nn.functional.conv2d(x, weight, bias, padding=pad)
    dout = torch.randn_like(out)

    def backward(mask):
        torch.ops.aten.convolution_backward(dout, x, weight, [f], [1, 1], list(pad), [1, 1],
                                            False, [0, 0], 1, mask)
    with torch.no_grad():
        return (1e3 * median_seconds(lambda: torch.nn.functional.conv2d(x, weight, bias, padding=pad)),
                1e3 * median_seconds(lambda: backward([True, False, False])),
                1e3 * median_seconds(lambda: backward([False, True, True])))


# ------------------------------------------------------ Conv2DTranspose
# A decoder's upsampling layer: 3x3, stride 2, "same", 64 -> 64 channels on 16x16 images, batch 64
CONV_TRANSPOSE = ("conv2d_transpose 3x3 s2 16x16 64->64", (64, 16, 16, 64), (3, 3, 64, 64), (2, 2))


def backend_conv_transpose_ms(backend):
    """(forward, backward) ms of the CONV_TRANSPOSE layer on `backend`, as Conv2DTranspose runs
    it: forward = conv2d_backward_data + bias_add, backward = conv2d_forward (input gradient) +
    conv2d_backward_filter + bias_grad."""
    _, in_shape, kernel_shape, strides = CONV_TRANSPOSE
    rng = np.random.default_rng(0)
    plan = backend.conv2d_transpose_plan(in_shape, kernel_shape, strides, "same")
    x = backend.from_numpy(rng.standard_normal(in_shape, dtype=np.float32))
    w = backend.from_numpy(rng.standard_normal(kernel_shape, dtype=np.float32) * 0.1)
    bias, dbias = backend.from_numpy(np.zeros(kernel_shape[2], np.float32)), backend.empty((kernel_shape[2],))
    y = backend.empty(plan.in_shape)
    dy = backend.from_numpy(rng.standard_normal(plan.in_shape, dtype=np.float32))
    dx, dw = backend.empty(in_shape), backend.empty(kernel_shape)

    def forward():
        backend.conv2d_backward_data(y, x, w, plan)
        backend.bias_add(y, y, bias)
        backend.synchronize()

    def backward():
        backend.conv2d_forward(dx, dy, w, None, plan)
        backend.conv2d_backward_filter(dw, None, x, dy, plan)
        backend.bias_grad(dbias, dy)
        backend.synchronize()
    return 1e3 * median_seconds(forward), 1e3 * median_seconds(backward)


def torch_conv_transpose_ms(torch):
    """The same two passes in PyTorch: conv_transpose2d, and convolution_backward for the input,
    weight and bias gradients."""
    _, (n, h, w, c), (kh, kw, f, _), strides = CONV_TRANSPOSE
    x, weight, bias = torch.randn(n, c, h, w), torch.randn(c, f, kh, kw) * 0.1, torch.zeros(f)
    pad, extra = [kh // 2, kw // 2], [1, 1]   # Keras's "same" for this layer: output 2H x 2W
    with torch.no_grad():
        def forward():
            return torch.nn.functional.conv_transpose2d(x, weight, bias, strides, pad, extra)
        dout = torch.randn_like(forward())
        backward = lambda: torch.ops.aten.convolution_backward(  # noqa: E731
            dout, x, weight, [f], list(strides), pad, [1, 1], True, extra, 1, [True, True, True])
        return 1e3 * median_seconds(forward), 1e3 * median_seconds(backward)


def conv_transpose_rows(backends, torch_result):
    """Time CONV_TRANSPOSE on each backend (not numpy) and print it next to torch's."""
    label = CONV_TRANSPOSE[0]
    result, rows = {}, []
    for name, b in backends.items():
        if name != "numpy":
            result[name] = dict(zip(("forward", "backward"), backend_conv_transpose_ms(b)))
    if torch_result is not None:
        result["torch"] = torch_result["conv_transpose_ms"]
    totals = {name: r["forward"] + r["backward"] for name, r in result.items()}
    for name, r in result.items():
        vs = f"{totals[name] / totals['torch']:.2f}" if "torch" in totals else ""
        rows.append([label, name, f"{r['forward']:.2f}", f"{r['backward']:.2f}", f"{totals[name]:.2f}", vs])
    _print_table("Conv2DTranspose, batch 64, ms", ["layer", "backend", "fwd", "bwd", "fwd+bwd", "vs torch"],
                 rows)
    return result


# ------------------------------------------------------ CNN training step

def cnn_step_flops():
    """Multiply-adds x 2 of one training step's convolutions and dense layers: forward,
    backward-filter and backward-data (not for the first conv, whose input needs no gradient)."""
    from minidl.backends.base import make_window
    flops = 0.0
    for i, (_, in_shape, kernel_shape, padding) in enumerate(CNN_CONVS):
        plan = make_window(in_shape, kernel_shape[:2], (1, 1), padding, out_channels=kernel_shape[3])
        flops += conv_flops(plan) * (2 if i == 0 else 3)
    for fan_in, fan_out in ((64 * 6 * 6, 512), (512, 10)):
        flops += 3 * 2.0 * CNN_BATCH * fan_in * fan_out
    return flops


def build_minidl_cnn(backend_name):
    """Keras's cifar10_cnn (without dropout) in minidl's Keras-style API, compiled with SGD."""
    import minidl
    from minidl import layers, optimizers
    from minidl.models import Sequential
    minidl.set_backend(backend_name)
    model = Sequential([
        layers.Input(CNN_INPUT),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer=optimizers.SGD(0.01, momentum=0.9),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def build_torch_cnn(torch):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, optimizer


def cnn_batch(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((CNN_BATCH,) + CNN_INPUT, dtype=np.float32)
    y = rng.integers(0, 10, CNN_BATCH).astype(np.int32)
    return x, y


def minidl_cnn_step_runner(backend_name):
    model = build_minidl_cnn(backend_name)
    x, y = cnn_batch()
    return lambda: model.train_on_batch(x, y)


def torch_cnn_step_runner(torch):
    model, optimizer = build_torch_cnn(torch)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = cnn_batch()
    xt = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
    yt = torch.from_numpy(y).long()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        optimizer.step()
    return step


def step_ms(runner, steps):
    """(median, best) ms of one training step over `steps` steps (after two warm-up steps)."""
    runner()
    runner()
    times = []
    for _ in range(steps):
        t0 = _clock()
        runner()
        times.append(_clock() - t0)
    return 1e3 * float(np.median(times)), 1e3 * float(np.min(times))


def _import_torch(threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def torch_report(threads, steps, clock="wall"):
    """Child-process entry point: torch's conv-layer ms and CNN step ms with `threads` threads."""
    set_clock(clock)
    torch = _import_torch(threads)
    if torch is None:
        return None
    conv = {}
    for label, in_shape, kernel_shape, padding in CNN_CONVS:
        fwd, bwd_data, bwd_filter = torch_conv_ms(torch, in_shape, kernel_shape, padding)
        conv[label] = {"forward": fwd, "backward_data": bwd_data, "backward_filter": bwd_filter}
    fwd, bwd = torch_conv_transpose_ms(torch)
    return {"version": torch.__version__, "conv_ms": conv,
            "conv_transpose_ms": {"forward": fwd, "backward": bwd},
            "cnn_step_ms": step_ms(torch_cnn_step_runner(torch), steps)}


def train_and_report_memory(kind, steps, threads):
    """Child-process entry point: run `steps` training steps of `kind` ("torch" or a minidl
    backend name) with `threads` threads and print the peak resident set size in MiB."""
    if kind == "torch":  # imported before anything loads the cpu backend's OpenMP settings
        torch = _import_torch(threads)
        if torch is None:
            raise ImportError("torch is not installed")
        runner = torch_cnn_step_runner(torch)
    else:
        runner = minidl_cnn_step_runner(kind)
    for _ in range(steps):
        runner()
    print(_peak_rss_mib())


def _peak_rss_mib():
    """This process's peak resident set size. VmHWM belongs to the process's own memory map;
    getrusage's ru_maxrss is not usable here, since Linux carries it across exec from the
    parent (every child would report at least the benchmark's own peak)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def peak_memory_mib(kind, threads, env, steps=200):
    code = CHILD_PRELUDE + f"bench.train_and_report_memory({kind!r}, {steps}, {threads})"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=3600)
    if result.returncode != 0:
        return None, result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
    return float(result.stdout.strip().splitlines()[-1]), None


# ------------------------------------------------------------------ main

def _print_table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(v)) for v in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        print("  " + "  ".join(str(v).rjust(w) for v, w in zip(row, widths)))


def run(backend_names, steps, memory, threads, clock, torch_passive=False, low_precision=True):
    _kernels().minidl_set_num_threads(threads)
    os.environ["MINIDL_NUM_THREADS"] = str(threads)  # for the child processes
    set_clock(clock)
    report = {"machine": machine_info(), "clock": clock}
    torch_env = child_env(**({"OMP_WAIT_POLICY": "passive"} if torch_passive else {}))
    report["torch_omp_wait_policy"] = torch_env.get("OMP_WAIT_POLICY", "torch default")
    torch = run_in_child(f"torch_report({threads}, {steps}, {clock!r})", torch_env)
    report["machine"]["torch"] = torch["version"] if torch else None
    peak = report["peak_gflops"] = peak_gflops()
    print(f"machine: {report['machine']}")
    print(f"clock: {clock}; torch's OMP_WAIT_POLICY: {report['torch_omp_wait_policy']}; "
          f"load average before the run: {os.getloadavg()[0]:.2f}")
    print(f"measured peak FP32: {peak:.1f} GFLOP/s ({threads} threads)")

    backends, unavailable = {}, {}
    for name in backend_names:
        try:
            backends[name] = get_backend(name)
        except Exception as exc:  # a backend that cannot run here is reported, not fatal
            unavailable[name] = f"{type(exc).__name__}: {exc}"
    report["unavailable"] = unavailable
    for name, why in unavailable.items():
        print(f"backend {name} not benchmarked: {why}")

    # SGEMM: each backend's gemm, then numpy's matmul (the columns the ratios divide by)
    gemm = report["sgemm_gflops"] = {name: backend_gemm_gflops(b) for name, b in backends.items()}
    matmul = ["numpy matmul"]
    gemm["numpy matmul"] = numpy_gemm_gflops_in_child(threads, clock)
    if os.environ.get("OPENBLAS_CORETYPE"):
        matmul.append("numpy matmul (no OPENBLAS_CORETYPE)")
        gemm[matmul[-1]] = numpy_gemm_gflops_in_child(threads, clock, drop_coretype=True)
    columns = list(backends) + matmul
    rows = []
    for n in GEMM_SIZES:
        row = [n] + [f"{gemm[c][n]:.1f}" for c in columns]
        row += [f"{gemm[b][n] / gemm[c][n]:.2f}" for b in backends for c in matmul]
        row += [f"{100 * gemm[b][n] / peak:.0f}%" for b in backends]
        rows.append(row)
    ratio_cols = [f"{b}/{c}" for b in backends for c in matmul]
    _print_table("SGEMM GFLOP/s (n x n x n)", ["n"] + columns + ratio_cols + [f"{b} %peak" for b in backends], rows)

    # conv layers
    conv = report["conv_ms"] = {}
    rows = []
    for label, in_shape, kernel_shape, padding in CNN_CONVS:
        entry = conv[label] = {}
        for name, b in backends.items():
            if name == "numpy":  # the reference backend is far too slow to be worth the wait
                continue
            fwd, bwd_data, bwd_filter, flops = backend_conv_ms(b, in_shape, kernel_shape, padding)
            entry[name] = {"forward": fwd, "backward_data": bwd_data, "backward_filter": bwd_filter}
            rows.append([label, name] + [f"{t:.2f}" for t in (fwd, bwd_data, bwd_filter)] +
                        [f"{100 * flops / (t * 1e6) / peak:.0f}%" for t in (fwd, bwd_data, bwd_filter)])
        if torch is not None:
            entry["torch"] = torch["conv_ms"][label]
            fwd, bwd_data, bwd_filter = (entry["torch"][k] for k in ("forward", "backward_data", "backward_filter"))
            rows.append([label, "torch", f"{fwd:.2f}", f"{bwd_data:.2f}", f"{bwd_filter:.2f}", "", "", ""])
    _print_table(f"Conv layers of the CIFAR-10 CNN, batch {CNN_BATCH}, ms (and % of peak)",
                 ["layer", "backend", "fwd", "bwd-data", "bwd-filter", "fwd%", "data%", "filter%"], rows)

    report["conv_transpose_ms"] = conv_transpose_rows(backends, torch)

    # whole training step
    step_flops = cnn_step_flops()
    report["cnn_step_gflop"] = step_flops / 1e9
    cnn = report["cnn_step"] = {}
    rows = []
    for name in backends:
        if name == "numpy":
            continue
        try:
            ms, best = step_ms(minidl_cnn_step_runner(name), steps)
        except Exception as exc:  # e.g. the Keras-style API is not complete yet
            cnn[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"CNN step on {name} not measured: {cnn[name]['error']}")
            continue
        cnn[name] = {"ms": ms, "best_ms": best, "images_per_s": CNN_BATCH * 1e3 / ms}
    if torch is not None:
        ms, best = torch["cnn_step_ms"]
        cnn["torch"] = {"ms": ms, "best_ms": best, "images_per_s": CNN_BATCH * 1e3 / ms}
    for name, r in cnn.items():
        if "ms" in r:
            if "torch" in cnn:
                r["vs_torch"] = r["ms"] / cnn["torch"]["ms"]
                r["best_vs_torch"] = r["best_ms"] / cnn["torch"]["best_ms"]
            r["fraction_of_peak"] = step_flops / (r["ms"] * 1e6) / peak
            rows.append([name, f"{r['ms']:.1f}", f"{r['best_ms']:.1f}", f"{r['images_per_s']:.0f}",
                         f"{r['vs_torch']:.2f}" if "vs_torch" in r else "",
                         f"{r['best_vs_torch']:.2f}" if "best_vs_torch" in r else "",
                         f"{100 * r['fraction_of_peak']:.0f}%"])
    _print_table(f"CIFAR-10 CNN training step, batch {CNN_BATCH}, {steps} steps ({clock} clock); "
                 f"{step_flops / 1e9:.1f} GFLOP of conv and dense layers per step",
                 ["backend", "median ms", "best ms", "images/s", "median vs torch", "best vs torch",
                  "%peak (median)"], rows)

    if memory:
        mem = report["peak_memory_mib"] = {}
        rows = []
        for kind in [n for n in backends if n != "numpy"] + (["torch"] if torch else []):
            mib, error = peak_memory_mib(kind, threads, torch_env if kind == "torch" else child_env())
            mem[kind] = mib if error is None else {"error": error}
            rows.append([kind, f"{mib:.0f}" if error is None else error])
        _print_table("Peak RSS of a 200-step training run (child process)", ["run", "MiB"], rows)
    if "cpu" in backends and low_precision:
        sys.path.insert(0, HERE)
        import bench_lowprec   # the low-precision section (benchmarks/bench_lowprec.py)
        bench_lowprec.CLOCK[0] = CLOCKS[clock]
        report["int8_predict"] = bench_lowprec.int8_rows()
        bench_lowprec.print_int8(report["int8_predict"], _print_table)
        report["mixed_bfloat16_step"] = bench_lowprec.mixed_rows()
        bench_lowprec.print_mixed(report["mixed_bfloat16_step"], _print_table)
        report["bf16_gemm"] = bench_lowprec.gemm_rows()
        bench_lowprec.print_gemm(report["bf16_gemm"], _print_table)
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="benchmarks/bench_backends.py", description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--backends", default="cpu", help="comma-separated backend names (default: cpu)")
    parser.add_argument("--steps", type=int, default=10, help="training steps timed per backend (default 10)")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory of 200-step runs")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for every contender (default: MINIDL_NUM_THREADS or all cores)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall clock, or process CPU time (only meaningful with --threads 1)")
    parser.add_argument("--torch-passive", action="store_true",
                        help="run torch with OMP_WAIT_POLICY=passive too (as the cpu backend), "
                             "instead of torch's default spinning threads")
    parser.add_argument("--depthwise", action="store_true",
                        help="only the depthwise convolutions of MobileNetV2 (benchmarks/bench_depthwise.py)")
    parser.add_argument("--sequence", action="store_true",
                        help="only LSTM / GRU / Conv1D forward + backward beside PyTorch (bench_sequence.py, bench_conv1d.py)")
    parser.add_argument("--binary", action="store_true",
                        help="only binary inference against float (benchmarks/bench_binary.py, cpu)")
    parser.add_argument("--no-low-precision", action="store_true",
                        help="skip the int8 and mixed_bfloat16 rows (benchmarks/bench_lowprec.py)")
    args = parser.parse_args(argv)
    threads = args.threads if args.threads else kernel_threads()
    if args.depthwise:
        sys.path.insert(0, HERE)
        import bench_depthwise
        bench_depthwise.run([n.strip() for n in args.backends.split(",") if n.strip()], threads, args.json)
        return
    if args.sequence:
        sys.path.insert(0, HERE)
        import bench_sequence
        import bench_conv1d
        names = [n.strip() for n in args.backends.split(",") if n.strip()]
        bench_sequence.run(names, threads)
        bench_conv1d.run(names, threads, rounds=7)
        return
    if args.binary:
        sys.path.insert(0, HERE)
        import bench_binary
        bench_binary.main(["--json", args.json] if args.json else [])
        return
    if args.clock == "cpu" and threads != 1:
        parser.error("--clock cpu counts every thread's time: use it with --threads 1")
    names = [n.strip() for n in args.backends.split(",") if n.strip()]
    report = run(names, max(args.steps, 1), args.memory, threads, args.clock, args.torch_passive,
                 not args.no_low_precision)
    if args.json:
        from minidl.io import atomic_write
        with atomic_write(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
