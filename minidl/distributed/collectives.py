"""Horovod's collectives on numpy arrays and on minidl weights: allreduce, allgather,
broadcast, broadcast_variables, and the gradient compressions (none, fp16, bf16).

A compressed allreduce sends 16-bit values and sums them pairwise in float32, rounding each
partial sum back to 16 bits (Horovod's fp16 allreduce does the same arithmetic on GPUs): half
the bytes for about 3 (fp16) or 2 (bf16) significant digits of the reduced gradient.
"""

import numpy as np

from . import world


class ReduceOp:
    """How allreduce combines the ranks' values (hvd.Average, hvd.Sum, ...)."""

    def __init__(self, name, numpy_fn):
        self.name, self.numpy_fn = name, numpy_fn

    def __repr__(self):
        return f"minidl.distributed.{self.name}"


Average = ReduceOp("Average", np.add)   # a sum, then divided by size()
Sum = ReduceOp("Sum", np.add)
Min = ReduceOp("Min", np.minimum)
Max = ReduceOp("Max", np.maximum)
Product = ReduceOp("Product", np.multiply)
OPS = (Average, Sum, Min, Max, Product)


def _bf16_bits(values):
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even; NaN stays NaN."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def _bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class _NoneCompressor:
    name = "none"
    wire_dtype = np.float32

    @staticmethod
    def compress(values):
        return np.ascontiguousarray(values, dtype=np.float32)

    @staticmethod
    def decompress(wire):
        return wire


class _FP16Compressor:
    name = "fp16"
    wire_dtype = np.float16

    @staticmethod
    def compress(values):
        return np.asarray(values, dtype=np.float32).astype(np.float16)

    @staticmethod
    def decompress(wire):
        return wire.astype(np.float32)


class _BF16Compressor:
    name = "bf16"
    wire_dtype = np.uint16

    @staticmethod
    def compress(values):
        return _bf16_bits(values)

    @staticmethod
    def decompress(wire):
        return _bf16_values(wire)


class Compression:
    """Horovod's gradient compressions: Compression.none, Compression.fp16 (and .bf16)."""
    none = _NoneCompressor
    fp16 = _FP16Compressor
    bf16 = _BF16Compressor


_COMPRESSORS = (Compression.none, Compression.fp16, Compression.bf16)
_user_ops = {}


def _mpi_op(op, compression):
    """The MPI reduction for (op, compression): MPI's own on float32, else a user op that
    decompresses, combines in float32 and compresses back."""
    MPI = world._world.mpi
    if compression is Compression.none:
        return {"Average": MPI.SUM, "Sum": MPI.SUM, "Min": MPI.MIN, "Max": MPI.MAX,
                "Product": MPI.PROD}[op.name]
    key = (op.name, compression.name)
    if key not in _user_ops:
        def combine(inbuf, inoutbuf, datatype, fn=op.numpy_fn, c=compression):
            a = np.frombuffer(inbuf, dtype=c.wire_dtype)
            b = np.frombuffer(inoutbuf, dtype=c.wire_dtype)
            b[...] = c.compress(fn(c.decompress(a), c.decompress(b)))
        _user_ops[key] = MPI.Op.Create(combine, commute=True)
    return _user_ops[key]


def _mpi_type(compression):
    MPI = world._world.mpi
    return MPI.FLOAT if compression is Compression.none else MPI.UINT16_T


def check_op(op, compression, owner):
    if op not in OPS:
        raise ValueError(f"{owner}: op must be one of minidl.distributed.Average, Sum, Min, Max, "
                         f"Product, got {op!r}")
    if compression not in _COMPRESSORS:
        raise ValueError(f"{owner}: compression must be Compression.none, .fp16 or .bf16, got "
                         f"{compression!r}")


def start_allreduce(values, op=Average, compression=Compression.none):
    """Begin a non-blocking allreduce of the float32 vector `values`; returns (request,
    finish): finish() -> the reduced float32 vector, once the request completed."""
    wire = compression.compress(values)
    result = np.empty_like(wire)
    comm = world._world.comm
    request = comm.Iallreduce([wire, _mpi_type(compression)], [result, _mpi_type(compression)],
                              op=_mpi_op(op, compression))

    def finish(buffers=(wire, result)):   # both must live until the request completes
        reduced = compression.decompress(result)
        if op is Average:
            reduced = reduced / np.float32(comm.Get_size())
        return reduced.astype(np.float32, copy=False)
    return request, finish


def allreduce(tensor, average=None, compression=Compression.none, op=None, name=None,
              prescale_factor=1.0, postscale_factor=1.0):
    """The elementwise reduction of `tensor` (a numpy array) over every rank, returned on each
    (Horovod's hvd.allreduce; op defaults to Average, or Sum with average=False)."""
    owner = "minidl.distributed.allreduce"
    world._require("allreduce")
    if op is None:
        op = Sum if average is False else Average
    elif average is not None:
        raise ValueError(f"{owner}: give op or the deprecated average, not both")
    check_op(op, compression, owner)
    array = np.asarray(tensor)
    if not np.issubdtype(array.dtype, np.number):
        raise TypeError(f"{owner}: expected a numeric array, got dtype {array.dtype}")
    values = array.astype(np.float32).ravel() * np.float32(prescale_factor)
    request, finish = start_allreduce(values, op, compression)
    world.wait([request], f"allreduce {name or ''}".strip())
    out = finish() * np.float32(postscale_factor)
    return out.reshape(array.shape).astype(array.dtype if np.issubdtype(array.dtype, np.floating)
                                            else np.float32, copy=False)


def allgather(tensor, name=None):
    """The ranks' arrays concatenated along axis 0, in rank order (hvd.allgather); the first
    dimension may differ between ranks, the others may not."""
    comm = world._require("allgather")
    array = np.ascontiguousarray(tensor)
    shapes = comm.allgather((array.shape, array.dtype.str))
    rest = {(s[1:], d) for s, d in shapes}
    if len(rest) != 1 or any(len(s) == 0 for s, _ in shapes):
        raise world.DistributedError(
            f"minidl.distributed.allgather {name or ''}: the ranks' arrays must agree beyond axis 0 "
            f"and in dtype; got shapes and dtypes {shapes}")
    counts = [int(np.prod(s)) for s, _ in shapes]
    out = np.empty((sum(s[0] for s, _ in shapes),) + array.shape[1:], dtype=array.dtype)
    MPI = world._world.mpi
    comm.Allgatherv(array.view(np.uint8) if array.size else np.empty(0, np.uint8),
                    [out.view(np.uint8), [c * array.dtype.itemsize for c in counts], MPI.BYTE])
    return out


def broadcast(tensor, root_rank, name=None):
    """Rank root_rank's array, returned on every rank (hvd.broadcast); the shapes must agree."""
    comm = world._require("broadcast")
    _check_root(root_rank, "broadcast")
    array = np.ascontiguousarray(tensor).copy()
    signatures = comm.allgather((array.shape, array.dtype.str))
    if len(set(signatures)) != 1:
        raise world.DistributedError(
            f"minidl.distributed.broadcast {name or ''}: the ranks' arrays differ in shape or dtype: "
            + ", ".join(f"rank {r}: {s} {d}" for r, (s, d) in enumerate(signatures)))
    comm.Bcast(array.view(np.uint8), root=root_rank)
    return array


def _check_root(root_rank, what):
    if isinstance(root_rank, bool) or not isinstance(root_rank, (int, np.integer)) or \
            not 0 <= root_rank < world.size():
        raise ValueError(f"minidl.distributed.{what}: root_rank must be a rank in [0, {world.size()}), "
                         f"got {root_rank!r}")


def broadcast_variables(variables, root_rank):
    """Set every weight (minidl Weight objects, e.g. model.variables / model.weights) to rank
    root_rank's value. The ranks must hold the same weights: names and shapes are compared
    first and a mismatch raises DistributedError on every rank, naming the first difference
    (names may differ: a process that built other layers before numbers them differently)."""
    comm = world._require("broadcast_variables")
    _check_root(root_rank, "broadcast_variables")
    variables = list(variables)
    signature = [(getattr(v, "path", None) or v.name, tuple(v.shape)) for v in variables]
    signatures = comm.allgather(signature)
    _check_same_models(signatures, root_rank)
    if not variables:
        return
    backend = variables[0].backend
    host = [np.ascontiguousarray(backend.to_numpy(v.value), dtype=np.float32).ravel() for v in variables]
    flat = np.concatenate(host)
    comm.Bcast(flat, root=root_rank)
    offset = 0
    for v, h in zip(variables, host):
        v.backend.copy_from_host(v.value, flat[offset:offset + h.size].reshape(v.shape))
        offset += h.size


def _check_same_models(signatures, root_rank):
    reference = signatures[root_rank]
    for r, signature in enumerate(signatures):
        if signature == reference:
            continue
        if len(signature) != len(reference):
            raise world.DistributedError(
                f"minidl.distributed: rank {r} has {len(signature)} weights, rank {root_rank} has "
                f"{len(reference)}: the ranks must build the same model")
        for (name, shape), (rname, rshape) in zip(signature, reference):
            if shape != rshape:
                raise world.DistributedError(
                    f"minidl.distributed: rank {r}'s weight {name!r} has shape {shape}, rank "
                    f"{root_rank}'s {rname!r} has {rshape}: the ranks must build the same model")


def broadcast_object(obj, root_rank=0, name=None):
    """A picklable Python object from root_rank (hvd.broadcast_object). Pickle runs only on
    objects the job's own ranks sent, never on files."""
    comm = world._require("broadcast_object")
    _check_root(root_rank, "broadcast_object")
    return comm.bcast(obj, root=root_rank)
