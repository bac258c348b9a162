"""Low-precision rows of `python -m minidl.bench`: int8 predict throughput against float32.

int8_rows(threads) quantizes keras_cnn and resnet20 (minidl.zoo, random weights; calibration
on 256 random images) on the cpu backend and times predict of one batch of 256 in float32 and
in int8, with the int8 micro-kernel that ran (vnni, avx2 or generic) and the top-1 agreement of
the two on those images. Run alone: `python benchmarks/bench_lowprec.py`.
"""

import time

import numpy as np

INT8_BATCH = 256
INT8_MODELS = ("keras_cnn", "resnet20")


def _median_ms(fn, runs=3):
    fn()   # warm-up: buffers, plans
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def int8_rows(runs=3):
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
        float_ms = _median_ms(lambda: model.predict(x, batch_size=INT8_BATCH), runs)
        int8_ms = _median_ms(lambda: qmodel.predict(x, batch_size=INT8_BATCH), runs)
        report[name] = {"float_ms": float_ms, "int8_ms": int8_ms, "speedup": float_ms / int8_ms,
                        "top1_agreement": float((pf.argmax(1) == pq.argmax(1)).mean()),
                        "kernel": qmodel.info()["kernel"]}
    return report


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
