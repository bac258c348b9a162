"""Training-step time and peak memory of two minidl source trees, alternated in one run.

    python benchmarks/compare_trees.py OLD_TREE NEW_TREE [--models keras_cnn,resnet20]
        [--rounds 5] [--steps 10] [--batch-size 128] [--threads 2] [--backend cpu]

For a change that must not slow minidl down (issue 20's redesign): each round runs, for each
model, one child process per tree (old, new, then new, old in the next round, so that drift
of a shared machine falls on both), which builds the model on `--backend`, trains two
warm-up steps, times `--steps` steps and reports the median step and its peak RSS. The
summary gives each tree's median over rounds and the ratio new / old.
A tree is a directory holding a `minidl` package with its C extension built.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
import minidl
from minidl import zoo
name, steps, batch, backend = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
minidl.set_backend(backend)
model = zoo.build(name)
model.compile(optimizer=minidl.optimizers.SGD(0.01, momentum=0.9),
              loss="sparse_categorical_crossentropy")
rng = np.random.default_rng(0)
x = rng.random((batch, 32, 32, 3), dtype=np.float32)
y = rng.integers(0, 10, batch)
for _ in range(2):
    model.train_on_batch(x, y)
times = []
for _ in range(steps):
    start = time.perf_counter()
    model.train_on_batch(x, y)
    times.append(time.perf_counter() - start)
times.sort()
print(json.dumps({"step_ms": 1000 * times[len(times) // 2],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "file": minidl.__file__}))
"""


def run_child(tree, model, steps, batch, threads, backend="cpu"):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), MINIDL_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", CHILD, model, str(steps), str(batch), backend], env=env,
                         cwd=os.path.abspath(tree), capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["file"].startswith(os.path.abspath(tree)):
        raise SystemExit(f"{tree}: the child imported minidl from {result['file']}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--models", default="keras_cnn,resnet20")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    trees = {"old": args.old, "new": args.new}
    results = {(m, t): [] for m in args.models.split(",") for t in trees}
    for r in range(args.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for model in args.models.split(","):
            for which in order:
                res = run_child(trees[which], model, args.steps, args.batch_size, args.threads,
                                args.backend)
                results[(model, which)].append(res)
                print(f"round {r + 1} {model:10s} {which}: {res['step_ms']:8.1f} ms/step, "
                      f"peak RSS {res['peak_rss_mb']:7.1f} MB", flush=True)
    print(f"\n{args.backend} backend, batch {args.batch_size}, {args.threads} threads, median over {args.rounds} rounds "
          f"of the median of {args.steps} steps")
    print(f"{'model':10s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s} {'old MB':>8s} "
          f"{'new MB':>8s}")
    for model in args.models.split(","):
        old = statistics.median(r["step_ms"] for r in results[(model, "old")])
        new = statistics.median(r["step_ms"] for r in results[(model, "new")])
        old_mb = max(r["peak_rss_mb"] for r in results[(model, "old")])
        new_mb = max(r["peak_rss_mb"] for r in results[(model, "new")])
        print(f"{model:10s} {old:9.1f} {new:9.1f} {new / old:8.3f} {old_mb:8.1f} {new_mb:8.1f}")


if __name__ == "__main__":
    main()
