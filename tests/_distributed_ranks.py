"""Run by tests/test_distributed.py under `mpirun -np 2`: one scenario per launch, named by
argv[1], on the backend argv[2]. Each rank writes its result as JSON to
$DISTRIBUTED_RESULTS/rank<r>.json (printing it could interleave the ranks' lines)."""

import json
import os
import sys

import numpy as np

import minidl
import minidl.distributed as hvd
from minidl import layers, optimizers
from minidl.models import Sequential


def small_model(seed, batchnorm=False):
    minidl.set_seed(seed)
    stack = [layers.Input((6, 6, 2)), layers.Conv2D(4, 3, activation="relu")]
    if batchnorm:
        stack.append(layers.BatchNormalization())
    stack += [layers.Flatten(), layers.Dense(8, activation="tanh"), layers.Dense(3, activation="softmax")]
    return Sequential(stack)


def data(n=64):
    rng = np.random.default_rng(7)
    return rng.normal(size=(n, 6, 6, 2)).astype(np.float32), rng.integers(0, 3, size=n)


def global_batches(x, y, per_rank_batch, ranks=2):
    """The data one process needs for the same samples per step as `ranks` ranks that each
    train on their shard with batch per_rank_batch: step s takes batch s of every shard."""
    shards = [hvd.shard(x, y, rank=k, size=ranks) for k in range(ranks)]
    steps = len(shards[0][0]) // per_rank_batch
    pick = lambda part: np.concatenate([shards[k][part][s * per_rank_batch:(s + 1) * per_rank_batch]
                                        for s in range(steps) for k in range(ranks)])
    return pick(0), pick(1)


def trained(model, opt, x, y, batch_size, epochs=2, callbacks=()):
    model.compile(opt, "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0,
                        callbacks=list(callbacks))
    return [w.tolist() for w in model.get_weights()], history.history


def scenario_collectives():
    r, n = hvd.rank(), hvd.size()
    out = {"rank": r, "size": n, "local": [hvd.local_rank(), hvd.local_size()],
           "cross": [hvd.cross_rank(), hvd.cross_size()]}
    v = np.arange(5, dtype=np.float32) + r
    out["average"] = hvd.allreduce(v).tolist()
    out["sum"] = hvd.allreduce(v, op=hvd.Sum).tolist()
    out["max"] = hvd.allreduce(v, op=hvd.Max).tolist()
    out["fp16"] = hvd.allreduce(v / 3, compression=hvd.Compression.fp16).tolist()
    out["bf16"] = hvd.allreduce(v / 3, compression=hvd.Compression.bf16).tolist()
    out["gather"] = hvd.allgather(np.full((r + 1, 2), r, np.int32)).tolist()
    out["bcast"] = hvd.broadcast(np.array([r, r], np.float32), root_rank=1).tolist()
    return out


def scenario_equivalence():
    """Two ranks on their shards (per-rank batch 16) against one process on the global batch 32."""
    x, y = data()
    xs, ys = hvd.shard(x, y)
    # different initial weights on each rank: the broadcast must make them rank 0's
    model = small_model(seed=1 + hvd.rank())
    weights, history = trained(model, hvd.DistributedOptimizer(optimizers.SGD(0.1, momentum=0.9)),
                               xs, ys, 16, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                                                      hvd.callbacks.MetricAverageCallback()])
    out = {"weights": weights, "loss": history["loss"]}
    if hvd.rank() == 0:
        out["reference"], _ = trained(small_model(seed=1), optimizers.SGD(0.1, momentum=0.9),
                                      *global_batches(x, y, 16), 32)
    return out


def scenario_syncbn():
    """BatchNormalization(synchronized=True) on 2 ranks against one process with ordinary
    BatchNormalization on the global batch."""
    x, y = data()
    xs, ys = hvd.shard(x, y)

    def model(synchronized):
        minidl.set_seed(1)
        return Sequential([layers.Input((6, 6, 2)), layers.Conv2D(4, 3),
                           layers.BatchNormalization(synchronized=synchronized, momentum=0.9),
                           layers.Activation("relu"), layers.Flatten(), layers.Dense(3, activation="softmax")])
    weights, _ = trained(model(True), hvd.DistributedOptimizer(optimizers.SGD(0.1, momentum=0.9)),
                         xs, ys, 16)
    out = {"weights": weights}
    if hvd.rank() == 0:
        out["reference"], _ = trained(model(False), optimizers.SGD(0.1, momentum=0.9),
                                      *global_batches(x, y, 16), 32)
        out["unsynchronized"], _ = trained(model(False), optimizers.SGD(0.1, momentum=0.9), xs, ys, 16)
    return out


def scenario_resume(folder):
    """3 epochs straight against 1 epoch, a checkpoint written by rank 0, then every rank
    loading it with hvd.load_model and training 2 more: bitwise equal."""
    from minidl import callbacks
    x, y = data()
    xs, ys = hvd.shard(x, y)

    def compiled():
        model = small_model(seed=1)
        model.compile(hvd.DistributedOptimizer(optimizers.Adam(0.01)), "sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        return model
    straight = compiled()
    straight.fit(xs, ys, batch_size=8, epochs=3, verbose=0,
                 callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    first = compiled()
    path = os.path.join(folder, "ckpt.minidl")
    first.fit(xs, ys, batch_size=8, epochs=1, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0), callbacks.ModelCheckpoint(path)])
    hvd.barrier()                      # rank 0 has written the file
    resumed = hvd.load_model(path)
    resumed.fit(xs, ys, batch_size=8, epochs=3, initial_epoch=resumed.trained_epochs, verbose=0,
                callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    return {"straight": [w.tolist() for w in straight.get_weights()],
            "resumed": [w.tolist() for w in resumed.get_weights()],
            "optimizer": type(resumed.optimizer).__mro__[1].__name__, "epochs": resumed.trained_epochs}


def scenario_passes():
    """backward_passes_per_step=2 with per-rank batch 8: the same update as one process with
    batch 32 (two passes of two ranks)."""
    x, y = data()
    xs, ys = hvd.shard(x, y)
    opt = hvd.DistributedOptimizer(optimizers.SGD(0.1), backward_passes_per_step=2,
                                   average_aggregated_gradients=True)
    weights, _ = trained(small_model(seed=1), opt, xs, ys, 8, epochs=1)
    out = {"weights": weights, "iterations": int(opt.iterations)}
    if hvd.rank() == 0:
        # pass p of rank k takes shard_k[8p:8p+8]; the single step takes all four
        shards = [hvd.shard(x, y, rank=k, size=2) for k in range(2)]
        pick = lambda part: np.concatenate([shards[k][part][s * 16:(s + 1) * 16]
                                            for s in range(2) for k in range(2)])
        out["reference"], _ = trained(small_model(seed=1), optimizers.SGD(0.1), pick(0), pick(1), 32,
                                      epochs=1)
    return out


def scenario_compressed():
    """fp16 and bf16 gradient compression: training moves, the ranks stay bitwise equal."""
    x, y = data()
    xs, ys = hvd.shard(x, y)
    out = {}
    for name in ("fp16", "bf16"):
        opt = hvd.DistributedOptimizer(optimizers.Adam(0.01),
                                       compression=getattr(hvd.Compression, name),
                                       fusion_threshold_bytes=256)   # several buckets
        weights, history = trained(small_model(seed=3), opt, xs, ys, 16, epochs=3)
        out[name] = {"weights": weights, "loss": history["loss"]}
    return out


def scenario_mismatch():
    model = small_model(seed=1) if hvd.rank() == 0 else Sequential(
        [layers.Input((6, 6, 2)), layers.Conv2D(5, 3), layers.Flatten(), layers.Dense(3)])
    model.compile(hvd.DistributedOptimizer(optimizers.SGD(0.1)), "mse")
    try:
        hvd.broadcast_variables(model.weights, root_rank=0)
    except hvd.DistributedError as exc:
        return {"error": str(exc)}
    return {"error": None}


def scenario_files(folder):
    """ModelCheckpoint and CSVLogger write on rank 0 only; the progress bar shows on rank 0."""
    from minidl import callbacks
    x, y = data()
    xs, ys = hvd.shard(x, y)
    model = small_model(seed=1)
    model.compile(hvd.DistributedOptimizer(optimizers.SGD(0.1)), "sparse_categorical_crossentropy")
    tag = f"rank{hvd.rank()}"
    model.fit(xs, ys, batch_size=16, epochs=1, verbose=2, callbacks=[
        callbacks.ModelCheckpoint(os.path.join(folder, f"ckpt_{tag}.minidl")),
        callbacks.CSVLogger(os.path.join(folder, f"log_{tag}.csv"))])
    return {"files": sorted(os.listdir(folder))}


def scenario_warmup():
    """LearningRateWarmupCallback's rate at each batch of 2 epochs of 2 steps, 2 warm-up epochs."""
    from minidl.callbacks import Callback
    x, y = data()
    xs, ys = hvd.shard(x, y)
    seen = []

    class Record(Callback):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(float(self.model.optimizer.current_learning_rate()))
    model = small_model(seed=1)
    model.compile(hvd.DistributedOptimizer(optimizers.SGD(0.4)), "sparse_categorical_crossentropy")
    model.fit(xs, ys, batch_size=16, epochs=3, verbose=0,
              callbacks=[hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.4, warmup_epochs=2), Record()])
    return {"lr": seen}


def scenario_raise():
    """Rank 1 raises inside fit: every rank must stop (MPI_Abort), naming rank 1."""
    from minidl.callbacks import Callback

    class Fail(Callback):
        def on_train_batch_end(self, batch, logs=None):
            if hvd.rank() == 1 and batch == 1:
                raise RuntimeError("injected failure")
    x, y = data()
    xs, ys = hvd.shard(x, y)
    model = small_model(seed=1)
    model.compile(hvd.DistributedOptimizer(optimizers.SGD(0.1)), "sparse_categorical_crossentropy")
    model.fit(xs, ys, batch_size=4, epochs=50, verbose=0, callbacks=[Fail()])
    return {}


def scenario_die():
    """Rank 1 dies outright (as if killed) in the middle of training."""
    from minidl.callbacks import Callback

    class Die(Callback):
        def on_train_batch_end(self, batch, logs=None):
            if hvd.rank() == 1 and batch == 1:
                os._exit(3)
    x, y = data()
    xs, ys = hvd.shard(x, y)
    model = small_model(seed=1)
    model.compile(hvd.DistributedOptimizer(optimizers.SGD(0.1)), "sparse_categorical_crossentropy")
    model.fit(xs, ys, batch_size=4, epochs=50, verbose=0, callbacks=[Die()])
    return {}


if __name__ == "__main__":
    name, backend = sys.argv[1], sys.argv[2]
    minidl.set_backend(backend)
    hvd.init(timeout=60)
    args = sys.argv[3:]
    result = globals()["scenario_" + name](*args)
    path = os.path.join(os.environ["DISTRIBUTED_RESULTS"], f"rank{hvd.rank()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)
