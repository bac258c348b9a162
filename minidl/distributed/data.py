"""Each rank's part of a data set."""

import numpy as np

from . import world


def shard(*arrays, rank=None, size=None):
    """Rank `rank`'s equal share of each array (along axis 0): samples rank, rank + size,
    rank + 2 * size, ... Every rank gets floor(n / size) samples (the last n % size are
    left out), so that all ranks run the same number of steps, as their collectives need.
    Defaults: this process's rank() and size(). One array in, one out; several: a tuple."""
    rank = world.rank() if rank is None else rank
    size = world.size() if size is None else size
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"minidl.distributed.shard: size must be a positive int, got {size!r}")
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank < size:
        raise ValueError(f"minidl.distributed.shard: rank must be in [0, {size}), got {rank!r}")
    if not arrays:
        raise ValueError("minidl.distributed.shard: give at least one array")
    n = len(arrays[0])
    for i, a in enumerate(arrays):
        if len(a) != n:
            raise ValueError(f"minidl.distributed.shard: array {i} has {len(a)} samples, array 0 "
                             f"has {n}")
    per_rank = n // size
    if per_rank == 0:
        raise ValueError(f"minidl.distributed.shard: {n} samples cannot give each of {size} ranks one")
    parts = tuple(np.asarray(a)[rank:per_rank * size:size] for a in arrays)
    return parts[0] if len(parts) == 1 else parts
