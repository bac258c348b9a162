"""Data-parallel scaling of minidl.distributed on this machine: one process with one thread
against 2 MPI ranks with one thread each, keras_cnn at per-rank batch 64 (the global batch
doubles, as in data-parallel training), plus the allreduce's latency and bandwidth.

    python benchmarks/bench_distributed.py [--steps 20]

It starts `mpirun -np 2` itself (as root it sets OpenMPI's OMPI_ALLOW_RUN_AS_ROOT*), prints a
table and the inputs of the scaling model in the README (compute time per step, gradient bytes).
Steps alternate between the DistributedOptimizer and a plain optimizer in the 2-rank run so the
two are measured under the same load.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 64


def _model(distributed):
    import minidl
    from minidl import optimizers, zoo
    minidl.set_seed(0)
    model = zoo.build("keras_cnn")
    opt = optimizers.SGD(0.01, momentum=0.9)
    if distributed:
        import minidl.distributed as hvd
        opt = hvd.DistributedOptimizer(opt)
    model.compile(opt, "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def _batch(seed):
    rng = np.random.default_rng(seed)
    return rng.random((BATCH, 32, 32, 3), dtype=np.float32), rng.integers(0, 10, BATCH)


def _median_step_ms(model, x, y, steps):
    model.train_on_batch(x, y)          # warm-up: plans, buffers, buckets
    model.train_on_batch(x, y)
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        model.train_on_batch(x, y)
        times.append(time.perf_counter() - started)
    return 1000 * float(np.median(times))


def rank_main(steps, out):
    """Inside mpirun: each rank times its steps with and without the allreduce, in turns."""
    import minidl.distributed as hvd
    hvd.init()
    x, y = _batch(hvd.rank())
    dist, plain = _model(True), _model(False)
    with_ms, without_ms = [], []
    for _ in range(3):
        with_ms.append(_median_step_ms(dist, x, y, steps))
        without_ms.append(_median_step_ms(plain, x, y, steps))
    latency, bandwidth = _allreduce_figures(hvd)
    grad_bytes = 4 * dist.count_params()
    stats = dist.optimizer.distributed_stats()
    if hvd.rank() == 0:
        with open(out, "w") as f:
            json.dump({"with_ms": float(np.median(with_ms)), "without_ms": float(np.median(without_ms)),
                       "latency_us": latency, "bandwidth": bandwidth, "gradient_bytes": grad_bytes,
                       "stats": stats}, f)


def _allreduce_figures(hvd):
    """Median time of an allreduce of 8 bytes (latency) and the bus bandwidth at larger sizes
    (a ring allreduce moves 2 (n - 1) / n of the data through each link)."""
    from minidl.distributed import collectives, world
    figures = {}
    for count in (2, 2 ** 14, 2 ** 18, 2 ** 22):
        values = np.ones(count, np.float32)
        times = []
        for _ in range(20 if count < 2 ** 20 else 5):
            hvd.allreduce(values[:1])           # line the ranks up
            started = time.perf_counter()
            request, finish = collectives.start_allreduce(values)
            world.wait([request], "benchmark")
            finish()
            times.append(time.perf_counter() - started)
        figures[count * 4] = float(np.median(times))
    n = hvd.size()
    bandwidth = {nbytes: 2 * (n - 1) / n * nbytes / t / 1e9 for nbytes, t in figures.items() if nbytes > 8}
    return 1e6 * figures[8], bandwidth


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rank-run", metavar="OUT", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rank_run:
        return rank_main(args.steps, args.rank_run)
    os.environ["MINIDL_NUM_THREADS"] = "1"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    single = []
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "ranks.json")
        for _ in range(2):      # single process and the 2-rank job in turns
            code = ("import sys; sys.path.insert(0, %r); import bench_distributed as b; "
                    "x, y = b._batch(0); print(b._median_step_ms(b._model(False), x, y, %d))"
                    % (HERE, args.steps))
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                  check=True)
            single.append(float(done.stdout.split()[-1]))
            subprocess.run(["mpirun", "-np", "2", "--bind-to", "core", sys.executable, __file__,
                            "--steps", str(args.steps), "--rank-run", out], env=env, check=True)
            with open(out) as f:
                ranks = json.load(f)
    single_ms = float(np.median(single))
    throughput_1 = BATCH / single_ms
    throughput_2 = 2 * BATCH / ranks["with_ms"]
    print(f"keras_cnn, per-rank batch {BATCH}, 1 thread per process, {args.steps} steps (median):")
    print(f"  1 process:           {single_ms:7.1f} ms/step  {1000 * throughput_1:7.1f} images/s")
    print(f"  2 ranks, allreduce:  {ranks['with_ms']:7.1f} ms/step  {1000 * throughput_2:7.1f} images/s"
          f"  -> {throughput_2 / throughput_1:.2f}x throughput ({throughput_2 / throughput_1 / 2:.0%} "
          f"scaling efficiency)")
    print(f"  2 ranks, no allreduce: {ranks['without_ms']:5.1f} ms/step -> the allreduce costs "
          f"{ranks['with_ms'] / ranks['without_ms']:.3f}x the step")
    st = ranks["stats"]
    print(f"  overlap: {st['started_during_backward']} of {st['buckets']} buckets started during "
          f"backward; apply_gradients waited {1000 * st['wait_seconds'] / st['steps']:.2f} ms per step")
    print(f"allreduce latency (8 bytes): {ranks['latency_us']:.1f} us; bus bandwidth: " +
          ", ".join(f"{nbytes / 2 ** 20:g} MiB {gbs:.2f} GB/s" for nbytes, gbs in
                    sorted((int(k), v) for k, v in ranks["bandwidth"].items())))
    print(f"scaling-model inputs: compute {ranks['without_ms']:.1f} ms/step, gradients "
          f"{ranks['gradient_bytes'] / 2 ** 20:.2f} MiB/step")


if __name__ == "__main__":
    sys.exit(main())
