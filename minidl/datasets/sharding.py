"""load_data(shard=(rank, size)): each rank's part of a data set's splits (minidl.distributed)."""


def shard_splits(splits, shard):
    """((x, y), ...) with each split replaced by rank's equal, interleaved part
    (minidl.distributed.shard); shard = (rank, size)."""
    from ..distributed.data import shard as shard_arrays
    try:
        rank, size = shard
    except (TypeError, ValueError):
        raise ValueError(f"load_data: shard must be (rank, size), got {shard!r}") from None
    return tuple(shard_arrays(x, y, rank=rank, size=size) for x, y in splits)
