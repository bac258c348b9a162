"""Low-precision rows of `python -m minidl.bench`: int8 predict and mixed_bfloat16 training
against float32 on the cpu backend.

int8_rows() quantizes keras_cnn and resnet20 (minidl.zoo, random weights; calibration
on 256 random images) on the cpu backend and times predict of one batch of 256 in float32 and
in int8, with the int8 micro-kernel that ran (vnni, avx2 or generic) and the top-1 agreement of
the two on those images. mixed_rows() times one training step (batch 128, Adam, random
data) of the same two models under the float32 and the mixed_bfloat16 policy; on a CPU without
AVX512_BF16 (and in this minidl, on any CPU) mixed_bfloat16 is an emulation (operands rounded
to bf16, float32 kernels), so its ratio says what the rounding costs, not a speed-up.
Run alone: `python benchmarks/bench_lowprec.py`.
"""

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


def _interleaved_ms(fns, runs):
    """Median ms of each of fns, timed in turns (a, b, a, b, ...) after one warm-up call each,
    so that a change of machine load during the run weighs on both alike."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, spent in zip(fns, times):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [1e3 * float(np.median(t)) for t in times]


def mixed_rows(steps=5):
    """{model: {float32_ms, mixed_bfloat16_ms, ratio}}: median training step times."""
    import warnings

    import minidl
    from minidl import mixed_precision, zoo
    minidl.set_backend("cpu")
    rng = np.random.default_rng(0)
    x = rng.random((MIXED_BATCH, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, MIXED_BATCH).astype(np.int32)
    report = {}
    for name in INT8_MODELS:
        steps_of = []
        for policy in ("float32", "mixed_bfloat16"):
            mixed_precision.set_global_policy(policy)
            minidl.set_seed(0)
            model = getattr(zoo, name)()
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            steps_of.append(lambda model=model: model.train_on_batch(x, y))
        mixed_precision.set_global_policy("float32")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # the emulation's warning
            float_ms, mixed_ms = _interleaved_ms(steps_of, steps)
        entry = report[name] = {"float32_ms": float_ms, "mixed_bfloat16_ms": mixed_ms}
        entry["ratio"] = entry["mixed_bfloat16_ms"] / entry["float32_ms"]
    report["path"] = mixed_precision.info()["compute"]
    return report


def print_mixed(report, print_table):
    rows = [[name, f"{r['float32_ms']:.0f}", f"{r['mixed_bfloat16_ms']:.0f}", f"{r['ratio']:.2f}"]
            for name, r in report.items() if name != "path"]
    print_table(f"training step, batch {MIXED_BATCH}, float32 vs mixed_bfloat16 on cpu "
                f"({report['path']})", ["model", "float32 ms", "mixed_bfloat16 ms", "ratio"], rows)


def print_int8(report, print_table):
    rows = [[name, f"{r['float_ms']:.0f}", f"{r['int8_ms']:.0f}",
             f"{INT8_BATCH * 1e3 / r['float_ms']:.0f}", f"{INT8_BATCH * 1e3 / r['int8_ms']:.0f}",
             f"{r['speedup']:.2f}", f"{100 * r['top1_agreement']:.1f}%", r["kernel"]]
            for name, r in report.items()]
    print_table(f"int8 predict vs float32 on cpu, batch {INT8_BATCH} (random weights and images)",
                ["model", "float ms", "int8 ms", "float img/s", "int8 img/s", "int8 speed-up",
                 "top-1 agreement", "int8 kernel"], rows)


if __name__ == "__main__":
    def _table(title, header, rows):
        print(f"\n{title}\n" + "\n".join("  ".join(str(c) for c in r) for r in [header] + rows))
    print_int8(int8_rows(), _table)
    print_mixed(mixed_rows(), _table)
