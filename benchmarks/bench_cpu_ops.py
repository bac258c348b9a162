"""Throughput of the cpu backend's non-GEMM ops against the numpy backend, per ISA path.

    python benchmarks/bench_cpu_ops.py [--n 4194304] [--isa generic,avx2,avx512] [--threads 2]

Prints, for each op, the best-of-repeats time per call and the memory traffic it implies
(bytes read + written / time), for the cpu backend on each ISA and for the numpy backend.
"""

import argparse
import time

import numpy as np

from minidl.backends.cpu._ffi import ISA_IDS, lib
from minidl.backends.base import make_window
from minidl.backends.cpu import create
from minidl.backends.numpy_backend import NumpyBackend


def best_time(fn, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cases(backend, n):
    """(name, bytes moved per call, callable) for a tensor of n floats."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(a)
    rows = a.reshape(-1, 1000 if n % 1000 == 0 else 1024)
    rows_out = np.empty_like(rows)
    c = 64
    x4 = a[: (n // (32 * 32 * c)) * 32 * 32 * c].reshape(-1, 32, 32, c)
    plan = make_window(x4.shape, (2, 2), (2, 2), "valid")
    pool_out = np.empty(plan.out_shape, np.float32)
    argmax = np.empty(plan.out_shape, np.int32)
    bn = a.reshape(-1, c)
    mean, invstd = np.empty(c, np.float32), np.empty(c, np.float32)
    gamma, beta = np.ones(c, np.float32), np.zeros(c, np.float32)
    mm, mv = np.zeros(c, np.float32), np.ones(c, np.float32)
    w, m, v = a.copy(), np.zeros_like(a), np.zeros_like(a)
    mask = np.empty_like(a)
    labels = rng.integers(0, rows.shape[1], rows.shape[0]).astype(np.int32)
    row_loss = np.empty(rows.shape[0], np.float32)
    count = np.empty(1, np.float32)
    g = b.copy()
    pool_dx = np.empty_like(x4)
    f = 4
    return [
        ("add", 3 * f * n, lambda: backend.add(out, a, b)),
        ("axpby", 3 * f * n, lambda: backend.axpby(out, 0.5, a, 2.0, b)),
        ("relu", 2 * f * n, lambda: backend.activation_forward(out, a, "relu")),
        ("relu_backward", 3 * f * n, lambda: backend.activation_backward(out, b, a, "relu")),
        ("sigmoid", 2 * f * n, lambda: backend.activation_forward(out, a, "sigmoid")),
        ("tanh", 2 * f * n, lambda: backend.activation_forward(out, a, "tanh")),
        ("leaky_relu", 2 * f * n, lambda: backend.activation_forward(out, a, "leaky_relu", 0.1)),
        ("softmax rows", 2 * f * n, lambda: backend.activation_forward(rows_out, rows, "softmax")),
        ("softmax_xent fwd sparse", 2 * f * n,
         lambda: backend.softmax_cross_entropy_forward(rows_out, row_loss, rows, labels)),
        ("categorical_accuracy", f * n, lambda: backend.categorical_accuracy(count, rows, labels)),
        ("bias_grad (M,64)", f * n, lambda: backend.bias_grad(mean, bn)),
        ("batchnorm train (M,64)", 3 * f * n,
         lambda: backend.batchnorm_forward_train(out.reshape(-1, c), mean, invstd, bn, gamma, beta,
                                                 mm, mv, 0.99, 1e-3)),
        ("max_pool 2x2 fwd", f * x4.size * 1.5,
         lambda: backend.max_pool2d_forward(pool_out, argmax, x4, plan)),
        ("max_pool 2x2 bwd", f * x4.size * 1.5,
         lambda: backend.max_pool2d_backward(pool_dx, pool_out, argmax, plan)),
        ("dropout", 3 * f * n, lambda: backend.dropout_forward(out, mask, a, 0.5, 42)),
        ("adam", 7 * f * n, lambda: backend.adam_update(w, b, m, v, 1e-3, 0.9, 0.999, 1e-7, 10, 0.0)),
        ("clip_by_value", 2 * f * n, lambda: backend.clip_by_value(g, 0.5)),
        ("all_finite", f * n, lambda: backend.all_finite(count, a)),
        ("sum", f * n, lambda: backend.sum(mean[:1], a)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4 * 1024 * 1024, help="floats per tensor")
    parser.add_argument("--isa", default="generic,avx2,avx512")
    parser.add_argument("--threads", type=int, default=0, help="0 keeps the default")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    if args.threads:
        lib.minidl_set_num_threads(args.threads)
    cpu, ref = create(), NumpyBackend()
    isas = [i for i in args.isa.split(",") if ISA_IDS[i] <= lib.minidl_cpu_best_isa()]
    columns = [f"cpu/{i}" for i in isas] + ["numpy"]
    print(f"n = {args.n} floats ({args.n * 4 / 2 ** 20:.0f} MiB per tensor), threads = "
          f"{lib.minidl_num_threads()}; each cell: ms per call, GB/s")
    print(f"{'op':26s}" + "".join(f"{c:>22s}" for c in columns))
    results = {}
    for isa in isas:
        lib.minidl_set_isa(ISA_IDS[isa])
        for name, nbytes, fn in cases(cpu, args.n):
            results[(name, f"cpu/{isa}")] = (best_time(fn, args.repeats), nbytes)
    for name, nbytes, fn in cases(ref, args.n):
        results[(name, "numpy")] = (best_time(fn, max(2, args.repeats // 3)), nbytes)
    for name, _, _ in cases(cpu, 1024 * 64):
        cells = []
        for column in columns:
            seconds, nbytes = results[(name, column)]
            cells.append(f"{seconds * 1e3:9.3f} {nbytes / seconds / 1e9:7.1f} GB/s")
        print(f"{name:26s}" + "".join(f"{c:>22s}" for c in cells))
    lib.minidl_set_isa(lib.minidl_cpu_best_isa())


if __name__ == "__main__":
    main()
