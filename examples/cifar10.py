#!/usr/bin/env python3
"""Train a CIFAR-10 model from minidl.zoo, with on-the-fly augmentation, checkpoints and a log.

    python examples/cifar10.py --model keras_cnn                   # SGD, augmentation, 20 epochs
    python examples/cifar10.py --model resnet20 --checkpoint r20.mdl
    python examples/cifar10.py --model resnet20 --checkpoint r20.mdl --resume   # after Ctrl-C
    python examples/cifar10.py --model keras_cnn --epochs 1 --train-limit 512 --test-limit 256
    python examples/cifar10.py --model airbench94                  # minidl.recipes.Airbench94, 9.9 epochs
    python examples/cifar10.py --model binarynet                   # larq's BinaryNet (FINN CNV), Adam

Each epoch prints its training time, images per second, training loss and accuracy and the
test accuracy; the last line sums the run up. --log writes the same as JSON after every epoch.
The data comes from minidl.datasets.cifar10.load_data (see there for where it looks).
"""

import argparse
import json
import math
import os
import shlex
import sys
import time

try:
    import minidl
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minidl

from minidl import callbacks, mixed_precision, optimizers, recipes, schedules, zoo
from minidl.data import ArrayIterator, Augment, channel_stats
from minidl.datasets import cifar10
from minidl.io import atomic_write
from minidl.models import load_model

# Per-model defaults: what each network needs to train well in `epochs` epochs.
DEFAULTS = {
    # Keras's example used RMSprop(1e-4) for 100+ epochs; SGD with momentum gets past 75% in 20.
    "keras_cnn": dict(epochs=20, batch_size=128, optimizer="sgd", lr=0.01, weight_decay=0.0,
                      schedule="constant"),
    "tf_tutorial": dict(epochs=20, batch_size=128, optimizer="sgd", lr=0.01, weight_decay=0.0,
                        schedule="constant"),
    # He et al.: SGD momentum 0.9 from 0.1, divided by 10 at 50% and 75% of the run.
    # Weight decay is the optimizer's decoupled one (Keras 3: w -= lr * weight_decay * w).
    # He et al.'s L2 of 1e-4 to 5e-4 goes through the momentum, which multiplies its effect
    # by 1 / (1 - 0.9) = 10; decoupled decay skips it, so 5e-3 here matches 5e-4 there.
    "resnet20": dict(epochs=60, batch_size=128, optimizer="sgd", lr=0.1, weight_decay=5e-3,
                     schedule="piecewise"),
    # Keller Jordan's airbench94 (minidl.recipes.Airbench94): lr and weight decay in its
    # decoupled form (per 1024 images, independent of momentum), PyTorch's Nesterov SGD, its
    # schedule and lookahead, 9.9 epochs (the last one cut short, as airbench's).
    "airbench94": dict(epochs=9.9, batch_size=1024, optimizer="sgd", lr=11.5, weight_decay=0.0153,
                       schedule="airbench"),
    # Keras's ImageNet MobileNetV2 unchanged on 32x32 images; its usual recipe: Adam from 1e-3.
    "mobilenet_v2": dict(epochs=30, batch_size=128, optimizer="adam", lr=1e-3, weight_decay=0.0,
                         schedule="piecewise"),
    # larq's BinaryNet recipe: Adam on the latent weights (kept in [-1, 1] by WeightClip)
    "binarynet": dict(epochs=100, batch_size=50, optimizer="adam", lr=1e-3, weight_decay=0.0,
                      schedule="piecewise"),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Train a minidl.zoo model on CIFAR-10.")
    p.add_argument("--backend", choices=["cpu", "opencl", "numpy"], default=None,
                   help="compute backend (default: MINIDL_BACKEND, else the fastest usable)")
    p.add_argument("--model", choices=zoo.MODELS, default="keras_cnn")
    p.add_argument("--epochs", type=float,
                   help="total epochs (model default: see DEFAULTS); a fraction for airbench94 only")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--optimizer", choices=["sgd", "adam", "rmsprop", "adagrad"])
    p.add_argument("--lr", type=float, help="initial learning rate")
    p.add_argument("--weight-decay", type=float, help="decoupled weight decay of the optimizer")
    p.add_argument("--augment", action=argparse.BooleanOptionalAction, default=True,
                   help="random crops and horizontal flips during training (default: on)")
    p.add_argument("--data-dir", help="folder holding cifar-10-batches-py/ or the tarball")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", metavar="PATH", help="save the model here after every epoch")
    p.add_argument("--resume", action="store_true",
                   help="continue the run saved in --checkpoint PATH (its model, optimizer state, "
                        "learning-rate schedule and data order; --lr and --optimizer are ignored)")
    p.add_argument("--train-limit", type=int, metavar="N", help="train on the first N images only")
    p.add_argument("--test-limit", type=int, metavar="N", help="test on the first N images only")
    p.add_argument("--log", metavar="PATH", help="JSON log of the run, rewritten after every epoch")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel training over MPI (run under mpirun -np N): each rank trains "
                        "on its shard with --batch-size, gradients averaged (minidl.distributed)")
    p.add_argument("--dtype-policy", default="float32",
                   choices=["float32", "mixed_bfloat16", "mixed_float16"],
                   help="Keras's mixed precision (minidl.mixed_precision.set_global_policy): float32 "
                        "variables, bfloat16 / float16 products (default: float32)")
    p.add_argument("--verbose", type=int, choices=[0, 1, 2], default=1,
                   help="per epoch: 0 this script's line (time, images/s, loss, accuracy), "
                        "1 a progress bar and that line, 2 fit's Keras-style line instead")
    args = p.parse_args(argv)
    for key, value in DEFAULTS[args.model].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    if args.resume and not args.checkpoint:
        p.error("--resume needs --checkpoint PATH (the file to resume from)")
    if args.model == "airbench94" and (args.optimizer != "sgd" or not args.augment):
        p.error("--model airbench94 trains with its recipe: Nesterov SGD and its augmentation")
    if args.model != "airbench94":
        if args.epochs != int(args.epochs):
            p.error(f"--epochs must be a whole number for {args.model}, got {args.epochs}")
        args.epochs = int(args.epochs)
    if args.distributed and args.model == "airbench94":
        p.error("--distributed trains the zoo models with their optimizer; airbench94's recipe "
                "is not supported with it yet")
    for name in ("epochs", "batch_size", "train_limit", "test_limit"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive, got {value}")
    return args


def make_optimizer(args, steps_per_epoch):
    lr = args.lr
    if args.schedule == "piecewise":
        boundaries = [int(args.epochs * f) * steps_per_epoch for f in (0.5, 0.75)]
        if 0 < boundaries[0] < boundaries[1]:
            lr = schedules.PiecewiseConstantDecay(boundaries, [args.lr, args.lr / 10, args.lr / 100])
    decay = args.weight_decay or None
    if args.optimizer == "sgd":
        return optimizers.SGD(learning_rate=lr, momentum=0.9, weight_decay=decay)
    if args.optimizer == "adam":
        return optimizers.Adam(learning_rate=lr, weight_decay=decay)
    if args.optimizer == "rmsprop":
        return optimizers.RMSprop(learning_rate=lr, weight_decay=decay)
    return optimizers.Adagrad(learning_rate=lr, weight_decay=decay)


def make_iterators(args, x_train, y_train, x_test, y_test):
    if args.model == "airbench94":
        recipe = airbench_recipe(args)
        # test images normalized once; evaluate / predict batch them (with or without TTA)
        return recipe.train_data(x_train, y_train, seed=args.seed), (recipe.normalize(x_test), y_test)
    mean, std = channel_stats(x_train)
    if args.model == "tf_tutorial":
        train_augment = Augment(crop=(24, 24), flip=True)
        test_augment = train_augment.for_evaluation()
        if not args.augment:
            train_augment = test_augment  # the network takes 24x24: crop the centre
    else:
        train_augment = Augment(pad=4, crop=(32, 32), flip=True) if args.augment else None
        test_augment = None
    train = ArrayIterator(x_train, y_train, batch_size=args.batch_size, shuffle=True,
                          seed=args.seed, augment=train_augment, mean=mean, std=std)
    test = ArrayIterator(x_test, y_test, batch_size=max(args.batch_size, 250), shuffle=False,
                         augment=test_augment, mean=mean, std=std)
    return train, test


def airbench_recipe(args):
    return recipes.Airbench94(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                              weight_decay=args.weight_decay)


def build_model(args, x_train, train):
    """A new compiled model and the callbacks its recipe needs."""
    if args.model == "airbench94":
        recipe = airbench_recipe(args)
        return recipe.build(x_train, len(train)), recipe.callbacks(len(train))
    model = zoo.build(args.model)
    optimizer = make_optimizer(args, len(train))
    extra = []
    if args.distributed:
        import minidl.distributed as hvd
        optimizer = hvd.DistributedOptimizer(optimizer)
        # every rank starts from rank 0's weights; epoch logs averaged over the ranks' shards
        extra = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback()]
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, extra


def test_time_augmentation(model, test, log):
    """airbench94's final evaluation: test accuracy without and with TTA, and its time."""
    started = time.perf_counter()
    plain = model.evaluate(*test, batch_size=500, return_dict=True)["accuracy"]
    tta = model.evaluate(*test, batch_size=500, tta="flip_translate", return_dict=True)["accuracy"]
    seconds = time.perf_counter() - started
    log.update(test_accuracy=plain, tta_test_accuracy=tta, final_evaluation_seconds=round(seconds, 3))
    print(f"final test accuracy {plain:.4f}, with test-time augmentation (flip_translate) {tta:.4f} "
          f"({seconds:.1f} s)", flush=True)


class EpochReport(callbacks.Callback):
    """Prints one line per epoch (unless --verbose 2, where fit prints its own) and keeps the
    JSON log up to date."""

    def __init__(self, args, num_train, log):
        super().__init__()
        self.args = args
        self.num_train = num_train
        self.log = log
        self.epoch_start = self.train_end = None
        self.seen = self.batches = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_start = time.perf_counter()
        self.seen = self.batches = 0

    def on_train_batch_end(self, batch, logs=None):
        # Keras's batch logs hold no batch size: count the batches this epoch ran (a resumed
        # epoch starts at its saved step), full ones but the data set's last
        self.batches += 1
        self.seen = min(self.batches * self.args.batch_size, self.num_train)
        self.train_end = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train_seconds = self.train_end - self.epoch_start
        record = {"epoch": epoch + 1, "train_seconds": round(train_seconds, 3),
                  "epoch_seconds": round(time.perf_counter() - self.epoch_start, 3),
                  "images_per_second": round(self.seen / train_seconds, 1) if train_seconds > 0 else None}
        record.update({key: float(value) for key, value in logs.items()})
        self.log["epochs"].append(record)
        write_log(self.args.log, self.log)
        if self.args.verbose == 2:   # fit prints its own line per epoch: one is enough
            return
        print(f"epoch {epoch + 1}/{self.args.epochs:g}: train {train_seconds:.1f} s + validation "
              f"{record['epoch_seconds'] - train_seconds:.1f} s, "
              f"{record['images_per_second']:.0f} images/s, loss {logs.get('loss', float('nan')):.4f}, "
              f"accuracy {logs.get('accuracy', float('nan')):.4f}, "
              f"test accuracy {logs.get('val_accuracy', float('nan')):.4f}", flush=True)


def write_log(path, log):
    if path:
        with atomic_write(path, "w") as f:
            json.dump(log, f, indent=1)


def previous_epochs(args, initial_epoch):
    """On --resume, the epoch records the interrupted run already logged (kept in --log)."""
    if not (args.resume and args.log and os.path.exists(args.log)):
        return []
    try:
        with open(args.log) as f:
            records = json.load(f).get("epochs", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [r for r in records if isinstance(r, dict) and r.get("epoch", 0) <= initial_epoch]


def summary_line(args, log):
    epochs = log["epochs"]
    if not epochs:
        return f"{args.model} on {log['backend']}: no epoch finished"
    best = max(epochs, key=lambda r: r.get("val_accuracy", -1))
    train_seconds = sum(r["train_seconds"] for r in epochs)
    images = sum(r["images_per_second"] * r["train_seconds"] for r in epochs if r["images_per_second"])
    return (f"summary: {args.model} on {log['backend']}, epochs {epochs[0]['epoch']}-{epochs[-1]['epoch']}: "
            f"final test accuracy {epochs[-1].get('val_accuracy', float('nan')):.4f} "
            f"(best {best.get('val_accuracy', float('nan')):.4f} at epoch {best['epoch']}), "
            f"{train_seconds / len(epochs):.1f} s/epoch, {images / train_seconds:.0f} images/s, "
            f"{log['wall_seconds']:.0f} s in all")


def data_not_found(exc):
    """One paragraph, no traceback: where the data was looked for and how to point at it."""
    places = ", ".join(exc.searched) or "(nowhere)"
    folder = exc.download_folder or "the cache folder"
    tried = (f"Downloading {exc.url} into {folder} failed ({exc.reason})." if exc.url
             else str(exc))
    return (f"cifar10.py: CIFAR-10 was not found. Looked in: {places}. {tried} Pass the folder "
            f"that holds cifar-10-batches-py/ (data_batch_1..5, test_batch) or "
            f"{cifar10.TARBALL_NAME} with --data-dir DIR, or set MINIDL_DATA_DIR=DIR; or copy "
            f"either into {folder}.")


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        if args.backend:
            minidl.set_backend(args.backend)
        backend = minidl.get_backend()
    except minidl.backends.BackendUnavailable as exc:   # one paragraph, no traceback
        which = args.backend or os.environ.get("MINIDL_BACKEND", "default")
        sys.exit(f"cifar10.py: the {which} backend cannot run here. {exc}.")
    backend_name = getattr(backend, "name", type(backend).__name__)
    minidl.set_seed(args.seed)
    # before any layer exists: a model built (or loaded without saved policies) takes it
    mixed_precision.set_global_policy(args.dtype_policy)

    try:
        (x_train, y_train), (x_test, y_test) = cifar10.load_data(args.data_dir)
    except cifar10.DatasetNotFoundError as exc:
        sys.exit(data_not_found(exc))
    except cifar10.CorruptDatasetError as exc:
        sys.exit(f"cifar10.py: {exc}")
    x_train, y_train = x_train[:args.train_limit], y_train[:args.train_limit]
    x_test, y_test = x_test[:args.test_limit], y_test[:args.test_limit]
    primary = True
    if args.distributed:
        import minidl.distributed as hvd
        hvd.init()
        primary = hvd.is_primary()
        x_train, y_train = hvd.shard(x_train, y_train)
        x_test, y_test = hvd.shard(x_test, y_test)
        if primary:
            print(f"distributed: {hvd.size()} ranks, {len(x_train)} training images each, global "
                  f"batch {hvd.size() * args.batch_size}", flush=True)
    train, test = make_iterators(args, x_train, y_train, x_test, y_test)

    if args.resume:
        if not os.path.exists(args.checkpoint):
            sys.exit(f"--resume: no checkpoint at {args.checkpoint}")
        if args.distributed:   # every rank resumes from rank 0's file
            import minidl.distributed as hvd
            model = hvd.load_model(args.checkpoint)
            recipe_callbacks = [hvd.callbacks.MetricAverageCallback()]
        else:
            model = load_model(args.checkpoint)
            if args.model == "airbench94":   # its lookahead state is in the file; these count
                recipe_callbacks = airbench_recipe(args).callbacks(len(train))
            else:
                recipe_callbacks = []
        initial_epoch = model.trained_epochs
        print(f"resuming {args.checkpoint}: {initial_epoch} epochs done", flush=True)
    else:
        model, recipe_callbacks = build_model(args, x_train, train)
        initial_epoch = 0
    if initial_epoch >= math.ceil(args.epochs):
        print(f"nothing to do: the checkpoint has {initial_epoch} epochs, --epochs is {args.epochs}")
        return 0

    log = {"args": vars(args), "backend": backend_name, "train_images": len(x_train),
           "test_images": len(x_test), "parameters": model.count_params(),
           "initial_epoch": initial_epoch, "epochs": previous_epochs(args, initial_epoch),
           "wall_seconds": 0.0}
    if not primary:   # rank 0 reports and writes the log
        args.log = None
    say = print if primary else (lambda *a, **k: None)
    say(f"{args.model} ({model.count_params():,} weights) on {backend_name}: "
          f"{len(x_train)} training / {len(x_test)} test images, batch {args.batch_size}, "
          f"{args.optimizer} lr {args.lr}, augmentation {'on' if args.augment else 'off'}, "
          f"{args.dtype_policy}", flush=True)
    cbs = recipe_callbacks + \
        ([EpochReport(args, len(x_train), log)] if primary else [])
    if args.checkpoint:
        cbs.append(callbacks.ModelCheckpoint(args.checkpoint))
    try:
        model.fit(train, epochs=math.ceil(args.epochs), initial_epoch=initial_epoch, validation_data=test,
                  callbacks=cbs, verbose=args.verbose)
    except KeyboardInterrupt:
        log["wall_seconds"] = time.perf_counter() - started
        log["interrupted"] = True
        write_log(args.log, log)
        if args.checkpoint:
            command = shlex.join([sys.executable, *sys.argv] + ([] if args.resume else ["--resume"]))
            print(f"\ninterrupted; the model was saved to {args.checkpoint}. Resume with:\n  {command}",
                  file=sys.stderr)
        else:
            print("\ninterrupted; nothing was saved (no --checkpoint). Run with --checkpoint PATH "
                  "to be able to resume with --resume.", file=sys.stderr)
        return 130
    if args.model == "airbench94":
        test_time_augmentation(model, test, log)
    log["wall_seconds"] = time.perf_counter() - started
    line = summary_line(args, log)
    log["summary"] = line
    write_log(args.log, log)
    say(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
