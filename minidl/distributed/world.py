"""The MPI world minidl.distributed runs in (through mpi4py), and the one fault policy.

mpi4py is imported on the first init(), never at `import minidl`: a machine without MPI keeps
the rest of minidl. Every rank calls the same collectives in the same order (data-parallel
training does: the same model, the same number of steps), so plain MPI collectives suffice.

Faults: an exception that escapes on one rank would leave the others waiting forever in their
next collective. init() therefore installs an excepthook that prints which rank failed and why,
then calls MPI_Abort, which stops every rank of the job at once (mpirun reports the exit code).
A rank that dies outright (killed, out of memory) is seen by mpirun, which ends the job too. A
collective that has not finished after `timeout` seconds (a rank stuck, not dead) raises
DistributedError on the ranks that wait.
"""

import sys
import time



class DistributedError(RuntimeError):
    """A collective failed or timed out, or the ranks disagree (e.g. different models)."""


class _World:
    comm = None          # MPI.COMM_WORLD (or the communicator given to init)
    local_comm = None    # the ranks on this machine
    mpi = None           # the mpi4py.MPI module
    timeout = 600.0      # seconds a collective may wait
    previous_hook = None


_world = _World()


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError("minidl.distributed needs mpi4py and an MPI library: "
                          "pip install \"minidl[distributed]\" (and an MPI such as Debian's "
                          "openmpi-bin)") from None
    return MPI


def init(comm=None, timeout=600.0):
    """Join the MPI job (Horovod's hvd.init()). `comm`: an mpi4py communicator (default
    COMM_WORLD); `timeout`: seconds any collective may wait before DistributedError. Calling
    it again is harmless."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"minidl.distributed.init: timeout must be a positive number of seconds, "
                         f"got {timeout!r}")
    MPI = _import_mpi()
    _world.mpi = MPI
    _world.timeout = float(timeout)
    if _world.comm is None:
        _world.comm = MPI.COMM_WORLD if comm is None else comm
        _world.local_comm = _world.comm.Split_type(MPI.COMM_TYPE_SHARED, key=_world.comm.Get_rank())
        _world.previous_hook = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def shutdown():
    """Leave minidl.distributed (MPI itself is finalized by mpi4py at exit)."""
    if _world.comm is None:
        return
    sys.excepthook = _world.previous_hook or sys.__excepthook__
    _world.local_comm.Free()
    _world.comm = _world.local_comm = None


def is_initialized():
    return _world.comm is not None


def _require(what):
    if _world.comm is None:
        raise ValueError(f"minidl.distributed.{what}: call minidl.distributed.init() first")
    return _world.comm


def rank():
    return _require("rank").Get_rank()


def size():
    return _require("size").Get_size()


def local_rank():
    _require("local_rank")
    return _world.local_comm.Get_rank()


def local_size():
    _require("local_size")
    return _world.local_comm.Get_size()


def cross_rank():
    """The index of this machine among the job's machines (Horovod's cross_rank): machines are
    numbered in the order of their first rank."""
    comm = _require("cross_rank")
    leader = _world.local_comm.bcast(comm.Get_rank(), root=0)
    firsts = comm.allgather(local_rank() == 0)
    return sum(firsts[:leader + 1]) - 1


def cross_size():
    comm = _require("cross_size")
    return sum(comm.allgather(local_rank() == 0))


def barrier():
    """Wait until every rank has called barrier() (hvd.barrier): e.g. rank 0 wrote a file the
    others read next."""
    comm = _require("barrier")
    request = comm.Ibarrier()
    wait([request], "barrier")


def is_primary():
    """True on rank 0, and in a process that did not init() (single-process training): what
    writes files and prints progress."""
    return _world.comm is None or _world.comm.Get_rank() == 0


def world_size():
    """size() when initialized, else 1 (for code that works with and without MPI)."""
    return 1 if _world.comm is None else _world.comm.Get_size()


def _abort_on_uncaught(kind, value, traceback):
    hook = _world.previous_hook or sys.__excepthook__
    hook(kind, value, traceback)
    comm = _world.comm
    if comm is not None and comm.Get_size() > 1:
        sys.stderr.write(f"minidl.distributed: rank {comm.Get_rank()} of {comm.Get_size()} failed "
                         f"with {kind.__name__}: {value}; stopping every rank (MPI_Abort)\n")
        sys.stderr.flush()
        comm.Abort(1)


def wait(requests, what):
    """Wait for mpi4py requests, at most the world's timeout. MPI progresses a non-blocking
    collective only inside MPI calls, so the first second polls without pausing (a pipelined
    allreduce needs a call per segment); after that it polls every millisecond."""
    MPI = _world.mpi
    started = time.monotonic()
    while not MPI.Request.Testall(requests):
        waited = time.monotonic() - started
        if waited > _world.timeout:
            raise DistributedError(f"{what} did not finish within {_world.timeout:.0f} s on rank "
                                   f"{rank()}: another rank is stuck or has stopped calling it")
        if waited > 1.0:
            time.sleep(0.001)


def allreduce_count(count):
    """The sum of an int over the ranks (rows of a synchronized batch); `count` alone when
    not initialized."""
    if _world.comm is None:
        return int(count)
    return int(_world.comm.allreduce(int(count), op=_world.mpi.SUM))


def allreduce_sum_tensors(backend, tensors):
    """Sum backend tensors in place over the ranks (one message; a synchronized layer's small
    statistics)."""
    if _world.comm is None or _world.comm.Get_size() == 1:
        return
    import numpy as np
    host = [np.ascontiguousarray(backend.to_numpy(t), dtype=np.float32) for t in tensors]
    flat = np.concatenate([h.ravel() for h in host])
    _world.comm.Allreduce(_world.mpi.IN_PLACE, flat, op=_world.mpi.SUM)
    offset = 0
    for t, h in zip(tensors, host):
        backend.copy_from_host(t, flat[offset:offset + h.size].reshape(h.shape))
        offset += h.size
