"""Low-precision rows of `python -m minidl.bench`: int8 predict and mixed_bfloat16 training
against float32 on the cpu backend.

int8_rows() quantizes keras_cnn and resnet20 (minidl.zoo, random weights; calibration
on 256 random images) on the cpu backend and times predict of one batch of 256 in float32 and
in int8, with the int8 micro-kernel that ran (vnni, avx2 or generic) and the top-1 agreement of
the two on those images. mixed_rows() times one training step (batch 128, Adam, random
data) of the same two models under the float32 and the mixed_bfloat16 policy, and PyTorch's
step in float32 and under bf16 autocast (each the better of NCHW and channels_last), all in
this process, in turns. mixed_bfloat16 runs the AMX bf16 kernels where the CPU has AMX, else
it is an emulation (operands rounded to bf16, float32 kernels) whose ratio says what the
rounding costs, not a speed-up. gemm_rows() times the bf16 GEMM (n x n x n) beside minidl's
SGEMM and torch.matmul in bfloat16 and float32.
Run alone: `python benchmarks/bench_lowprec.py [--threads 1 --clock cpu]` (the CPU clock is the
measure that survives a machine shared with other jobs).
"""

import os
import sys

import time

import numpy as np

INT8_BATCH = 256
INT8_MODELS = ("keras_cnn", "resnet20")


def int8_rows(runs=5):
    """{model: {float_ms, int8_ms, speedup, top1_agreement, kernel}} on the cpu backend."""
    import minidl
    from minidl import zoo
    from minidl.quantization import quantize
    minidl.set_backend("cpu")
    minidl.set_seed(0)
    x = np.random.default_rng(0).random((INT8_BATCH, 32, 32, 3)).astype(np.float32)
    report = {}
    for name in INT8_MODELS:
        model = getattr(zoo, name)()
        qmodel = quantize(model, x)
        pf, pq = model.predict(x, batch_size=INT8_BATCH), qmodel.predict(x, batch_size=INT8_BATCH)
        float_ms, int8_ms = _interleaved_ms([lambda: model.predict(x, batch_size=INT8_BATCH),
                                             lambda: qmodel.predict(x, batch_size=INT8_BATCH)], runs)
        report[name] = {"float_ms": float_ms, "int8_ms": int8_ms, "speedup": float_ms / int8_ms,
                        "top1_agreement": float((pf.argmax(1) == pq.argmax(1)).mean()),
                        "kernel": qmodel.info()["kernel"]}
    return report


MIXED_BATCH = 128


CLOCK = [time.perf_counter]   # main's --clock cpu: time.process_time (single-threaded runs only)


def _interleaved_ms(fns, runs):
    """Median ms of each of fns, timed in turns (a, b, a, b, ...) after one warm-up call each,
    so that a change of machine load during the run weighs on both alike."""
    clock = CLOCK[0]
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, spent in zip(fns, times):
            start = clock()
            fn()
            spent.append(clock() - start)
    return [1e3 * float(np.median(t)) for t in times]


def _torch_steps(name, x, y):
    """{label: step function} of PyTorch's `name` (benchmarks/bench_zoo.py's module) with Adam:
    float32 and bf16 autocast, each in NCHW and channels_last; {} without torch."""
    try:
        import torch
    except ImportError:
        return {}
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_zoo import torch_model
    from minidl.backends.cpu._ffi import lib
    torch.set_num_threads(int(lib.minidl_num_threads()))   # the threads minidl's kernels use
    steps = {}
    for layout in ("nchw", "channels_last"):
        torch.manual_seed(0)
        model = torch_model(name).train()
        tx = torch.from_numpy(x.transpose(0, 3, 1, 2).copy())
        if layout == "channels_last":
            model = model.to(memory_format=torch.channels_last)
            tx = tx.contiguous(memory_format=torch.channels_last)
        ty = torch.from_numpy(y.astype(np.int64))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.CrossEntropyLoss()
        for autocast in (False, True):
            def step(model=model, tx=tx, ty=ty, optimizer=optimizer, autocast=autocast):
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                    loss = loss_fn(model(tx), ty)
                loss.backward()
                optimizer.step()
            steps[("torch_bf16" if autocast else "torch_float32", layout)] = step
    return steps


def mixed_rows(steps=5):
    """{model: {float32_ms, mixed_bfloat16_ms, ratio, torch_float32_ms, torch_bf16_ms, ...}}:
    median training step times, every contender timed in turns."""
    import warnings

    import minidl
    from minidl import mixed_precision, zoo
    minidl.set_backend("cpu")
    rng = np.random.default_rng(0)
    x = rng.random((MIXED_BATCH, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, MIXED_BATCH).astype(np.int32)
    report = {}
    for name in INT8_MODELS:
        contenders = {}
        for policy in ("float32", "mixed_bfloat16"):
            mixed_precision.set_global_policy(policy)
            minidl.set_seed(0)
            model = getattr(zoo, name)()
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            contenders[(policy, "")] = lambda model=model: model.train_on_batch(x, y)
        mixed_precision.set_global_policy("float32")
        contenders.update(_torch_steps(name, x, y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # the emulation's warning, where it is one
            times = dict(zip(contenders, _interleaved_ms(list(contenders.values()), steps)))
        entry = report[name] = {"float32_ms": times[("float32", "")],
                                "mixed_bfloat16_ms": times[("mixed_bfloat16", "")]}
        entry["ratio"] = entry["mixed_bfloat16_ms"] / entry["float32_ms"]
        for kind in ("torch_float32", "torch_bf16"):
            layouts = {layout: ms for (k, layout), ms in times.items() if k == kind}
            if layouts:
                best = min(layouts, key=layouts.get)
                entry[f"{kind}_ms"], entry[f"{kind}_layout"] = layouts[best], best
        if "torch_bf16_ms" in entry:
            entry["vs_torch_bf16"] = entry["mixed_bfloat16_ms"] / entry["torch_bf16_ms"]
    report["path"] = mixed_precision.info()["compute"]
    return report


GEMM_SIZES = (1024, 2048)


def gemm_rows(runs=5):
    """{n: {minidl_bf16, minidl_float32, torch_bf16, torch_float32}} GFLOP/s of n x n x n, timed in turns."""
    from minidl.backends.cpu.backend import CpuBackend
    backend = CpuBackend()
    report = {}
    for n in GEMM_SIZES:
        rng = np.random.default_rng(n)
        a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        c = np.empty((n, n), np.float32)
        fns = {"minidl_bf16": lambda: backend.gemm(c, a, b, precision="bfloat16"),
               "minidl_float32": lambda: backend.gemm(c, a, b)}
        try:
            import torch
            torch.set_num_threads(int(backend.info()["threads"]))
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            ta16, tb16 = ta.bfloat16(), tb.bfloat16()
            fns["torch_bf16"] = lambda: torch.matmul(ta16, tb16)
            fns["torch_float32"] = lambda: torch.matmul(ta, tb)
        except ImportError:
            pass
        times = _interleaved_ms(list(fns.values()), runs)
        report[n] = {k: 2 * n ** 3 / (ms * 1e6) for k, ms in zip(fns, times)}
    return report


def print_mixed(report, print_table):
    rows = []
    for name, r in report.items():
        if name == "path":
            continue
        torch_cols = [f"{r['torch_float32_ms']:.0f} ({r['torch_float32_layout']})",
                      f"{r['torch_bf16_ms']:.0f} ({r['torch_bf16_layout']})",
                      f"{r['vs_torch_bf16']:.2f}"] if "torch_bf16_ms" in r else ["", "", ""]
        rows.append([name, f"{r['float32_ms']:.0f}", f"{r['mixed_bfloat16_ms']:.0f}", f"{r['ratio']:.2f}"]
                    + torch_cols)
    print_table(f"training step, batch {MIXED_BATCH}, float32 vs mixed_bfloat16 on cpu "
                f"({report['path']})", ["model", "float32 ms", "mixed_bfloat16 ms", "mixed / float32",
                                        "torch float32 ms", "torch bf16 autocast ms", "mixed / torch bf16"],
                rows)


def print_gemm(report, print_table):
    columns = ["minidl_bf16", "minidl_float32", "torch_bf16", "torch_float32"]
    rows = [[str(n)] + [f"{r[c]:.0f}" if c in r else "" for c in columns] for n, r in report.items()]
    print_table("GEMM GFLOP/s (n x n x n): minidl bf16 (mixed_bfloat16's kernel) beside float32 and torch",
                ["n"] + columns, rows)


def print_int8(report, print_table):
    rows = [[name, f"{r['float_ms']:.0f}", f"{r['int8_ms']:.0f}",
             f"{INT8_BATCH * 1e3 / r['float_ms']:.0f}", f"{INT8_BATCH * 1e3 / r['int8_ms']:.0f}",
             f"{r['speedup']:.2f}", f"{100 * r['top1_agreement']:.1f}%", r["kernel"]]
            for name, r in report.items()]
    print_table(f"int8 predict vs float32 on cpu, batch {INT8_BATCH} (random weights and images)",
                ["model", "float ms", "int8 ms", "float img/s", "int8 img/s", "int8 speed-up",
                 "top-1 agreement", "int8 kernel"], rows)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="kernel threads (torch's too); 0: every core")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU time, which other jobs do not inflate (with --threads 1)")
    args = parser.parse_args()
    from minidl.backends.cpu._ffi import lib as _lib
    _lib.minidl_set_num_threads(args.threads)
    if args.clock == "cpu":
        CLOCK[0] = time.process_time

    def _table(title, header, rows):
        print(f"\n{title}\n" + "\n".join("  ".join(str(c) for c in r) for r in [header] + rows))
    print_gemm(gemm_rows(), _table)
    print_mixed(mixed_rows(), _table)
    print_int8(int8_rows(), _table)
