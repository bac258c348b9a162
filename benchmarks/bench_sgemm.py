"""SGEMM GFLOP/s of minidl's cpu kernels (each AVX-512 micro-kernel this CPU can run) beside
numpy/OpenBLAS in the same process, timed in turns (a, b, c, a, b, c, ...) so that the load of a
shared machine weighs on every contender alike; the median of each.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_sgemm.py [--runs 7]

(OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, where set, hold OpenBLAS to an older kernel: unset them in
this command only for a fair comparison; the kernel OpenBLAS runs is printed, from threadpoolctl.)"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _openblas_kernel():
    try:
        import threadpoolctl
    except ImportError:
        return "unknown (pip install threadpoolctl to see it)"
    return ", ".join(f"{i.get('internal_api')} {i.get('architecture')} x{i.get('num_threads')}"
                     for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas")


def rows(sizes=(512, 1024, 2048), runs=7, clock=time.perf_counter, every_kernel=False):
    """{size: {contender: GFLOP/s}}, contenders numpy and the minidl SGEMM kernels of this CPU's
    best ISA (every_kernel: of every ISA)."""
    import numpy as np     # here, after main() set OPENBLAS_NUM_THREADS
    from minidl.backends.cpu._ffi import ffi, lib
    kernels = [ffi.string(lib.minidl_sgemm_kernel_names(i)).decode() for i in range(lib.minidl_sgemm_kernel_count())]
    best_isa = ffi.string(lib.minidl_cpu_isa_name()).decode()
    kernels = [k for k in kernels if every_kernel or k.startswith(best_isa)]
    default = ffi.string(lib.minidl_sgemm_kernel_name()).decode()
    rng = np.random.default_rng(0)
    report = {}
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out = np.empty((n, n), np.float32)
        pa, pb, po = (ffi.from_buffer("float[]", x) for x in (a, b, out))

        def ours(name):
            def run():
                lib.minidl_sgemm_select_kernel(name.encode())
                lib.minidl_sgemm(po, pa, pb, 1.0, 0.0, 0, 0, n, n, n, n, n, n)
            return run
        contenders = {"numpy": lambda: np.matmul(a, b, out=out)}
        contenders.update({"minidl " + k: ours(k) for k in kernels})
        times = {name: [] for name in contenders}
        for fn in contenders.values():
            fn()
        for _ in range(runs):
            for name, fn in contenders.items():
                reps = max(1, int(2e9 / (2.0 * n ** 3)))
                start = clock()
                for _ in range(reps):
                    fn()
                times[name].append((clock() - start) / reps)
        lib.minidl_sgemm_select_kernel(b"")
        report[n] = {name: 2.0 * n ** 3 / float(np.median(t)) / 1e9 for name, t in times.items()}
    return report, default


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None,
                        help="threads of both (default: every core); 1 with --clock cpu on a busy machine")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU time, divided by the threads (less sensitive to "
                             "other jobs on a shared machine, blind to idle threads)")
    parser.add_argument("--every-kernel", action="store_true", help="also the avx2 and generic kernels")
    args = parser.parse_args()
    if args.threads:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["MINIDL_NUM_THREADS"] = str(args.threads)
    from minidl.backends.cpu._ffi import lib
    threads = args.threads or os.cpu_count()
    clock = time.perf_counter if args.clock == "wall" else (lambda: time.process_time() / threads)
    report, default = rows(runs=args.runs, clock=clock, every_kernel=args.every_kernel)
    print(f"numpy: {_openblas_kernel()}; minidl threads {lib.minidl_num_threads()}, default kernel {default}")
    for n, row in report.items():
        print(f"{n:5d}  " + "  ".join(f"{name} {g:6.1f}" for name, g in row.items())
              + f"  (best minidl / numpy {max(v for k, v in row.items() if k != 'numpy') / row['numpy']:.2f})")


if __name__ == "__main__":
    main()
