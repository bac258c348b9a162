"""Data-parallel training over MPI with Horovod's Keras API: `import minidl.distributed as hvd`.

    hvd.init()
    x, y = hvd.shard(x, y)                                   # each rank its own samples
    opt = hvd.DistributedOptimizer(minidl.optimizers.SGD(0.01 * hvd.size(), momentum=0.9))
    model.compile(opt, "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                               hvd.callbacks.MetricAverageCallback()])

Run with `mpirun -np N python script.py`. Progress bars, ModelCheckpoint and CSVLogger act
on rank 0 only. Needs mpi4py (`pip install "minidl[distributed]"`) and an MPI library.
"""

from . import callbacks
from .collectives import (Average, Compression, Max, Min, Product, Sum, allgather, allreduce,
                          broadcast, broadcast_object, broadcast_variables)
from .data import shard
from .optimizer import DistributedOptimizer, load_model
from .world import (DistributedError, barrier, cross_rank, cross_size, init, is_initialized, is_primary,
                    local_rank, local_size, rank, shutdown, size)

__all__ = ["Average", "Compression", "DistributedError", "DistributedOptimizer", "Max", "Min",
           "Product", "Sum", "allgather", "allreduce", "broadcast", "broadcast_object",
           "broadcast_variables", "barrier", "callbacks", "cross_rank", "cross_size", "init", "is_initialized",
           "is_primary", "load_model", "local_rank", "local_size", "rank", "shard", "shutdown", "size"]
