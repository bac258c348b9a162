#!/usr/bin/env python3
"""Training speed of the minidl.zoo models on each backend, next to PyTorch's for the same networks.

    python benchmarks/bench_zoo.py                                  # every usable backend, every model
    python benchmarks/bench_zoo.py --backends cpu --models resnet20 --steps 20 --json out.json
    python benchmarks/bench_zoo.py --backends cpu --models airbench94 --batch-size 1024 --steps 3

airbench94 trains with its recipe (minidl.recipes.Airbench94: AlternatingFlipIterator, Nesterov
SGD with learning-rate multipliers, label smoothing, lookahead) against the PyTorch twin of
torch_airbench.py (channels_last). Each row also gives the measuring process's peak resident
memory (ru_maxrss: the data, the model, its buffers and the library).

Method: for each (backend, model) a fresh child process trains the model with model.fit on
random CIFAR-shaped uint8 images fed through minidl.data.ArrayIterator (random crops and flips,
so the data path is included), SGD with momentum 0.9, `--batch-size` images per step. The first
`--warmup` steps (buffer allocation, kernel compilation, autotuning) are not timed; the next
`--steps` are, from the end of the last warm-up step to the end of the last step, with the
backend synchronized at both ends. Seconds per epoch are that time extrapolated to 50,000
images (CIFAR-10's training set, validation not included); images/s = timed images / seconds.
PyTorch runs the equivalent torch.nn.Module the same way (random tensors, SGD momentum 0.9,
cross-entropy, torch.set_num_threads(os.cpu_count())) when torch can be imported. Child
processes keep one library's thread pools from stealing the cores of the next measurement.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EPOCH_IMAGES = 50_000
MODELS = ("keras_cnn", "tf_tutorial", "resnet20", "airbench94")
INPUT_SHAPES = {"keras_cnn": (32, 32, 3), "tf_tutorial": (24, 24, 3), "resnet20": (32, 32, 3),
                "airbench94": (32, 32, 3)}


# ---------------------------------------------------------------- minidl worker
def measure_minidl(backend_name, model_name, batch, warmup, steps):
    sys.path.insert(0, REPO)
    import numpy as np

    import minidl
    from minidl import callbacks, optimizers, zoo
    from minidl.data import ArrayIterator, Augment

    backend = minidl.set_backend(backend_name)
    minidl.set_seed(0)
    rng = np.random.default_rng(0)
    n = (warmup + steps) * batch
    x = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=(n, 1), dtype=np.uint8)
    extra = []
    if model_name == "airbench94":
        from minidl.recipes import Airbench94
        recipe = Airbench94(batch_size=batch)
        data = recipe.train_data(x, y.ravel(), seed=0)
        model = recipe.build(x, len(data))
        extra = recipe.callbacks(len(data))
    else:
        model = zoo.build(model_name)
        model.compile(optimizer=optimizers.SGD(learning_rate=0.01, momentum=0.9),
                      loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        crop = INPUT_SHAPES[model_name][:2]
        augment = Augment(pad=4 if crop == (32, 32) else 0, crop=crop, flip=True)
        data = ArrayIterator(x, y, batch_size=batch, seed=0, augment=augment)

    class StepTimer(callbacks.Callback):
        start = end = None

        def on_train_batch_end(self, index, logs=None):
            if index == warmup - 1 or index == warmup + steps - 1:
                backend.synchronize()
                now = time.perf_counter()
                if index == warmup - 1:
                    self.start = now
                else:
                    self.end = now

    timer = StepTimer()
    begin = time.perf_counter()
    model.fit(data, epochs=1, verbose=0, callbacks=extra + [timer])
    if timer.start is None:  # no warm-up: time from the start of fit
        timer.start = begin
    return timer.end - timer.start


# ---------------------------------------------------------------- torch worker
def torch_model(name):
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, stride=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding=k // 2, bias=False), nn.BatchNorm2d(cout))

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(conv_bn(cin, cout, 3, stride), nn.ReLU(), conv_bn(cout, cout, 3))
            self.shortcut = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    if name == "keras_cnn":
        return nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
            nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Dropout(0.5), nn.Linear(512, 10))
    if name == "tf_tutorial":
        # "same" 3x3/2 pooling of 24 -> 12 -> 6; torch pads both sides where TF pads one, same cost
        return nn.Sequential(
            nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2, padding=1), nn.BatchNorm2d(64),
            nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(3, 2, padding=1),
            nn.Flatten(), nn.Linear(6 * 6 * 64, 384), nn.ReLU(), nn.Linear(384, 192), nn.ReLU(),
            nn.Linear(192, 10))
    if name == "resnet20":
        blocks = [conv_bn(3, 16, 3), nn.ReLU()]
        cin = 16
        for stage, cout in enumerate((16, 32, 64)):
            for block in range(3):
                blocks.append(BasicBlock(cin, cout, 2 if stage > 0 and block == 0 else 1))
                cin = cout
        blocks += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
        return nn.Sequential(*blocks)
    raise ValueError(f"unknown model {name!r}")


def measure_torch(model_name, batch, warmup, steps):
    import torch

    torch.set_num_threads(os.cpu_count())
    torch.manual_seed(0)
    if model_name == "airbench94":
        sys.path.insert(0, HERE)
        from torch_airbench import training_step
        return time_steps(training_step(batch), warmup, steps)
    model = torch_model(model_name).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()  # on logits: the softmax of the Keras model's last layer
    h, w, c = INPUT_SHAPES[model_name]
    x = torch.rand(batch, c, h, w)
    y = torch.randint(0, 10, (batch,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    return time_steps(step, warmup, steps)


def time_steps(step, warmup, steps):
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return time.perf_counter() - start


# ---------------------------------------------------------------- driver
def run_worker(job, timeout):
    """Run one measurement in a child process; (seconds, None) or (None, error text)."""
    # -X faulthandler: a crash in native code still prints the Python stack it happened under
    command = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--worker", json.dumps(job)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if done.returncode < 0:
        # faulthandler prints each thread's stack, innermost frame first: name the innermost
        # minidl frame of the thread that crashed ("Current thread", else the main thread's)
        stacks = done.stderr.split("\n\n")
        crashed = ([t for t in stacks if "Current thread" in t] + [t for t in stacks if "in measure_minidl" in t])
        frames = [line.strip() for line in (crashed[0] if crashed else "").splitlines() if "/minidl/" in line]
        where = f" in {frames[0]}" if frames else ""
        return None, f"crashed with {signal.Signals(-done.returncode).name}{where}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"exit status {done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def worker_main(job):
    import resource
    job = json.loads(job)
    if job["kind"] == "torch":
        seconds = measure_torch(job["model"], job["batch"], job["warmup"], job["steps"])
    else:
        seconds = measure_minidl(job["backend"], job["model"], job["batch"], job["warmup"], job["steps"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
    print(json.dumps({"seconds": seconds, "peak_mb": round(peak)}))


def figures(measured, batch, steps):
    seconds, images = measured["seconds"], batch * steps
    return {"seconds": round(seconds, 4), "ms_per_step": round(1000 * seconds / steps, 2),
            "images_per_second": round(images / seconds, 1),
            "seconds_per_epoch": round(seconds / images * EPOCH_IMAGES, 1), "peak_mb": measured["peak_mb"]}


def main(argv=None):
    p = argparse.ArgumentParser(description="Seconds per CIFAR-10 epoch of the zoo models, per backend, "
                                            "with PyTorch's figure beside them.")
    p.add_argument("--backends", help="comma-separated (default: every usable backend)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated, from " + ", ".join(MODELS))
    p.add_argument("--steps", type=int, default=10, help="timed training steps (default 10)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps before them (default 2)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch figures")
    p.add_argument("--timeout", type=int, default=1800, help="seconds allowed to one measurement")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker_main(args.worker)
        return 0
    if args.steps <= 0 or args.warmup < 0 or args.batch_size <= 0:
        p.error("--steps and --batch-size must be positive, --warmup >= 0")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}; choose from {', '.join(MODELS)}")

    sys.path.insert(0, REPO)
    import minidl
    from minidl.io import atomic_write

    if args.backends:
        backends = [b.strip() for b in args.backends.split(",") if b.strip()]
        for name in backends:
            reason = minidl.backends.unavailable_reason(name)
            if reason:
                p.error(f"backend {name!r} is not usable here: {reason}")
    else:
        backends = minidl.available_backends()
    have_torch = False
    if not args.no_torch:
        try:
            import torch
            have_torch = True
            torch_version = torch.__version__
        except ImportError:
            print("(PyTorch is not importable: no PyTorch column)", file=sys.stderr)

    job = {"batch": args.batch_size, "warmup": args.warmup, "steps": args.steps}
    results = []
    for model in models:
        reference = None
        if have_torch:
            measured, error = run_worker(dict(job, kind="torch", model=model), args.timeout)
            reference = figures(measured, args.batch_size, args.steps) if measured else {"error": error}
            results.append(dict(reference, model=model, backend=f"pytorch {torch_version}"))
        for backend in backends:
            print(f"measuring {model} on {backend} ...", file=sys.stderr, flush=True)
            measured, error = run_worker(dict(job, kind="minidl", backend=backend, model=model), args.timeout)
            row = figures(measured, args.batch_size, args.steps) if measured else {"error": error}
            row.update(model=model, backend=backend)
            if measured and reference and "seconds" in reference:
                row["vs_pytorch"] = round(row["seconds"] / reference["seconds"], 2)
            results.append(row)

    print(f"\nCIFAR-10 training speed, batch {args.batch_size}: {args.steps} steps timed after "
          f"{args.warmup} warm-up steps, extrapolated to {EPOCH_IMAGES:,} images per epoch "
          f"(random data through ArrayIterator with crops and flips; validation not included; "
          f"{os.cpu_count()} CPU threads).\n")
    print("| model | backend | ms/step | images/s | s/epoch | time vs PyTorch | peak memory MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in results:
        if "error" in row:
            print(f"| {row['model']} | {row['backend']} | failed: {row['error']} | | | | |")
            continue
        ratio = f"{row['vs_pytorch']:.2f}x" if "vs_pytorch" in row else ""
        print(f"| {row['model']} | {row['backend']} | {row['ms_per_step']:.1f} | "
              f"{row['images_per_second']:.0f} | {row['seconds_per_epoch']:.1f} | {ratio} | {row['peak_mb']} |")
    if args.json:
        with atomic_write(args.json, "w") as f:
            json.dump({"batch_size": args.batch_size, "warmup": args.warmup, "steps": args.steps,
                       "epoch_images": EPOCH_IMAGES, "cpu_count": os.cpu_count(), "results": results},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
