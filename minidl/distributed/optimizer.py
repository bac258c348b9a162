"""DistributedOptimizer: Horovod's optimizer wrapper for minidl optimizers.

The wrapped optimizer is an instance of a subclass of the original's class (as Horovod does),
so it keeps its name, config, saved state and fused update. Before that update, every gradient
is allreduced over the ranks:

- Buckets (tensor fusion): the gradients, in the order backward completes them (last layer
  first), are grouped into buckets of at most `fusion_threshold_bytes` (one message each; a
  gradient larger than the threshold is a bucket of its own).
- Overlap: the model tells the optimizer when a layer's gradients are final
  (Graph.backward's on_grads_final); a bucket whose gradients are all final starts its
  non-blocking allreduce at once, while backward goes on through the earlier layers. Buckets
  not started by then (custom train_step, regularized weights, backward_passes_per_step > 1)
  start in apply_gradients. Each gradient is read from the backend once per step.
- backward_passes_per_step=k: k local gradients are summed (averaged with
  average_aggregated_gradients=True) and only every k-th call allreduces and updates.
"""

import time

import numpy as np

from . import collectives, world

DEFAULT_FUSION_BYTES = 2 * 1024 * 1024


class _DistributedMixin:
    """apply_gradients with the allreduce in front (see the module docstring)."""

    def _setup_distributed(self, compression, op, backward_passes_per_step,
                           average_aggregated_gradients, fusion_threshold_bytes):
        self._dist_compression = compression
        self._dist_op = op
        self._dist_passes = backward_passes_per_step
        self._dist_average_passes = bool(average_aggregated_gradients)
        self._dist_threshold = fusion_threshold_bytes
        self._dist_buckets = None     # [[position, ...], ...] in backward order
        self._dist_bucket_of = None   # position -> bucket index
        self._dist_bucket_buffers = None  # bucket -> backend tensor (1, its gradients' size)
        self._dist_accumulated = None  # backend tensors summing the local passes (k > 1)
        self._dist_pass = 0
        self._dist_stats = {"steps": 0, "buckets": 0, "started_during_backward": 0,
                            "wait_seconds": 0.0}
        self._reset_step()

    def distributed_stats(self):
        """Counts since the wrapper was made: allreduced steps, buckets, buckets started while
        backward still ran (the overlap), and the seconds apply_gradients waited for them."""
        return dict(self._dist_stats)

    def _reset_step(self):
        self._dist_final = {}         # position -> gradient tensor, this step
        self._dist_started = {}       # bucket -> (request, finish)

    # ------------------------------------------------------------- buckets
    def _plan_buckets(self):
        order = list(range(len(self._shapes)))[::-1]
        buckets, current, size = [], [], 0
        for position in order:
            nbytes = 4 * int(np.prod(self._shapes[position]))
            if current and size + nbytes > self._dist_threshold:
                buckets.append(current)
                current, size = [], 0
            current.append(position)
            size += nbytes
        if current:
            buckets.append(current)
        self._dist_buckets = buckets
        self._dist_bucket_of = {p: i for i, bucket in enumerate(buckets) for p in bucket}
        self._dist_bucket_buffers = [
            self._backend.zeros((1, sum(int(np.prod(self._shapes[p])) for p in bucket)))
            for bucket in buckets]

    def _flat_views(self, bucket, grads):
        """The bucket's gradients as (1, size) views, in bucket order."""
        backend = self._backend
        return [backend.reshape(grads[p], (1, int(np.prod(self._shapes[p]))))
                for p in self._dist_buckets[bucket]]

    def gradients_final(self, weights):
        """Called during backward with weights whose gradients are complete: start every
        bucket they complete. Ignored unless this step will allreduce (see the docstring)."""
        if world.world_size() == 1 or self._dist_passes > 1 or not self.built:
            return
        if self._dist_buckets is None:
            self._plan_buckets()
        touched = set()
        for w in weights:
            position = self._positions.get(id(w.value))
            if position is not None:
                self._dist_final[position] = w.grad
                touched.add(self._dist_bucket_of[position])
        for bucket in sorted(touched):
            if bucket not in self._dist_started and \
                    all(p in self._dist_final for p in self._dist_buckets[bucket]):
                self._start_bucket(bucket, self._dist_final)
        if self._dist_started:   # MPI progresses non-blocking collectives inside its calls
            world._world.mpi.Request.Testall([r for r, _ in self._dist_started.values()])

    def _start_bucket(self, bucket, grads):
        backend, buffer = self._backend, self._dist_bucket_buffers[bucket]
        backend.concat_forward(buffer, self._flat_views(bucket, grads))
        values = np.asarray(backend.to_numpy(buffer), dtype=np.float32).ravel()
        self._dist_started[bucket] = collectives.start_allreduce(values, self._dist_op,
                                                                 self._dist_compression)

    # ---------------------------------------------------------------- step
    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        if world.world_size() == 1:
            return super().apply_gradients(pairs)
        if self._dist_passes > 1 and not self._aggregate_locally(pairs):
            return None
        if self._dist_buckets is None:
            self._plan_buckets()
        grads = {p: grad for p, (grad, _) in enumerate(pairs)}
        stats = self._dist_stats
        stats["steps"] += 1
        stats["buckets"] += len(self._dist_buckets)
        stats["started_during_backward"] += len(self._dist_started)
        for bucket in range(len(self._dist_buckets)):
            if bucket not in self._dist_started:
                self._start_bucket(bucket, grads)
        started = self._dist_started
        waiting = time.perf_counter()
        world.wait([r for r, _ in started.values()], f"allreduce of step {self.iterations}'s gradients")
        stats["wait_seconds"] += time.perf_counter() - waiting
        backend = self._backend
        for bucket, (_, finish) in started.items():
            buffer = self._dist_bucket_buffers[bucket]
            backend.copy_from_host(buffer, finish().reshape(1, -1))
            backend.concat_backward(self._flat_views(bucket, grads), buffer)
        self._reset_step()
        return super().apply_gradients(pairs)

    def _aggregate_locally(self, pairs):
        """Sum this pass's gradients into the accumulators; True on the k-th pass, with the
        pairs' gradients then holding the sum (or mean)."""
        backend = self._backend
        if self._dist_accumulated is None:
            self._dist_accumulated = [backend.zeros(tuple(backend.shape(g))) for g, _ in pairs]
        self._dist_pass += 1
        for acc, (grad, _) in zip(self._dist_accumulated, pairs):
            backend.add(acc, acc, grad)
        if self._dist_pass < self._dist_passes:
            self._reset_step()
            return False
        scale = 1.0 / self._dist_passes if self._dist_average_passes else 1.0
        for acc, (grad, _) in zip(self._dist_accumulated, pairs):
            backend.axpby(grad, scale, acc, 0.0, acc)
            backend.fill(acc, 0.0)
        self._dist_pass = 0
        return True


def DistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                         compression=collectives.Compression.none, sparse_as_dense=False,
                         gradient_predivide_factor=1.0, op=collectives.Average,
                         backward_passes_per_step=1, average_aggregated_gradients=False,
                         fusion_threshold_bytes=DEFAULT_FUSION_BYTES):
    """Wrap `optimizer` so that every update uses the gradients allreduced over the ranks
    (Horovod's hvd.DistributedOptimizer). device_dense / device_sparse / sparse_as_dense are
    TensorFlow placement options, accepted and ignored; fusion_threshold_bytes (a minidl
    argument; Horovod reads HOROVOD_FUSION_THRESHOLD) bounds a fused message."""
    from ..optimizers.base import Optimizer
    owner = "minidl.distributed.DistributedOptimizer"
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{owner}: expected a minidl optimizer instance, got {type(optimizer).__name__}")
    if isinstance(optimizer, _DistributedMixin):
        raise ValueError(f"{owner}: the optimizer is already a DistributedOptimizer")
    if optimizer.built:
        raise ValueError(f"{owner}: wrap the optimizer before compile() builds it")
    collectives.check_op(op, compression, owner)
    if op not in (collectives.Average, collectives.Sum):
        raise ValueError(f"{owner}: op must be Average or Sum for gradients, got {op!r}")
    if gradient_predivide_factor != 1.0:
        raise ValueError(f"{owner}: gradient_predivide_factor other than 1.0 is not supported")
    for argument, value in (("backward_passes_per_step", backward_passes_per_step),
                            ("fusion_threshold_bytes", fusion_threshold_bytes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{owner}: {argument} must be a positive int, got {value!r}")
    base = type(optimizer)
    cls = type(base.__name__, (_DistributedMixin, base), {"__module__": base.__module__})
    config = optimizer.get_config()
    if name is not None:
        config["name"] = name
    wrapped = cls.from_config(config)
    wrapped._setup_distributed(compression, op, int(backward_passes_per_step),
                               average_aggregated_gradients, int(fusion_threshold_bytes))
    return wrapped


def load_model(filepath, custom_optimizers=None, custom_objects=None,
               compression=collectives.Compression.none):
    """A saved model with its optimizer wrapped in DistributedOptimizer, its state (slots,
    iteration count) and training position kept (Horovod's hvd.load_model): every rank loads
    the same file to resume a run. custom_optimizers: optimizer classes of your own."""
    from ..models import minidl_files
    from ..optimizers import deserialize
    objects = dict(custom_objects or {})
    objects.update({cls.__name__: cls for cls in (custom_optimizers or [])})
    model = minidl_files.load_model(filepath, custom_objects=objects)
    if not model.compiled:
        return model
    config = minidl_files.compile_config(model)
    state = model.optimizer.get_state(model.backend)
    with minidl_files.custom_object_scope(objects):
        wrapped = DistributedOptimizer(deserialize(config["optimizer"]), compression=compression)
        minidl_files.compile_from_config(model, config, optimizer=wrapped)
    wrapped.set_state(model.backend, state)
    return model
