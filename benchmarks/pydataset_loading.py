"""Batch loading with minidl.utils.PyDataset (workers: threads or forked processes) beside
PyTorch's DataLoader, in one run.

    python benchmarks/pydataset_loading.py [--batches 60] [--delay-ms 4] [--repeats 3]

Each batch costs `delay_ms` of waiting (a file read, say) plus a little numpy work (a
random 32x32x3 crop-and-flip of 32 images); one epoch reads every batch in order. Reported:
seconds per epoch (median of the repeats, contenders alternated since the machine is
shared) for serial reading and for 4 workers, and minidl's time over torch's.
"""

import argparse
import statistics
import time

import numpy as np


def make_batch(index, delay):
    time.sleep(delay)
    rng = np.random.default_rng(index)
    images = rng.random((32, 36, 36, 3), dtype=np.float32)
    y, x = rng.integers(0, 5, 2)
    batch = images[:, y:y + 32, x:x + 32]
    return np.ascontiguousarray(batch[:, :, ::-1]), rng.integers(0, 10, 32)


def minidl_dataset(batches, delay, **kwargs):
    from minidl.utils import PyDataset

    class Batches(PyDataset):
        def __len__(self):
            return batches

        def __getitem__(self, index):
            return make_batch(index, delay)

    return Batches(**kwargs)


def torch_loader(batches, delay, workers):
    import torch.utils.data as tud

    class Batches(tud.Dataset):
        def __len__(self):
            return batches

        def __getitem__(self, index):
            return make_batch(index, delay)

    return tud.DataLoader(Batches(), batch_size=None, num_workers=workers,
                          prefetch_factor=None if workers == 0 else 10 // workers,
                          multiprocessing_context=None if workers == 0 else "fork")


def epoch_seconds(source):
    start = time.perf_counter()
    count = sum(1 for _ in source)
    return time.perf_counter() - start, count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--delay-ms", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    delay = args.delay_ms / 1000
    contenders = {
        "minidl serial": lambda: minidl_dataset(args.batches, delay),
        "torch serial": lambda: torch_loader(args.batches, delay, 0),
        "minidl 4 threads": lambda: minidl_dataset(args.batches, delay, workers=4),
        "minidl 4 processes": lambda: minidl_dataset(args.batches, delay, workers=4,
                                                     use_multiprocessing=True),
        "torch 4 processes": lambda: torch_loader(args.batches, delay, 4),
    }
    times = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, make in contenders.items():   # alternated, repeat after repeat
            seconds, count = epoch_seconds(make())
            assert count == args.batches
            times[name].append(seconds)
    median = {name: statistics.median(t) for name, t in times.items()}
    for name, seconds in median.items():
        print(f"{name:20s} {seconds:7.3f} s/epoch  ({args.batches / seconds:6.1f} batches/s)")
    print(f"serial:    minidl / torch = {median['minidl serial'] / median['torch serial']:.2f}")
    for kind in ("threads", "processes"):
        ratio = median[f"minidl 4 {kind}"] / median["torch 4 processes"]
        print(f"4 workers: minidl ({kind}) / torch (processes) = {ratio:.2f}")


if __name__ == "__main__":
    main()
