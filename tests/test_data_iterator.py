"""ArrayIterator: shapes, normalization, augmentation (C kernel against the numpy reference),
determinism and state, background prefetch, argument validation."""

import threading

import numpy as np
import pytest

from minidl import data
from minidl.data import ArrayIterator, Augment, augment_batch, augment_reference, channel_stats

KERNELS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(
    not data.c_kernels_available(), reason="csrc/augment.c is not built (pip install -e .)"))]
needs_c = pytest.mark.skipif(not data.c_kernels_available(), reason="csrc/augment.c is not built")


def images(n=50, h=8, w=6, c=3, seed=0, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=(n, h, w, c), dtype=np.uint8)
    return rng.normal(size=(n, h, w, c)).astype(dtype)


def epoch(it):
    """One epoch as copies (the iterator reuses its buffers)."""
    return [(xb.copy(), None if yb is None else yb.copy()) for xb, yb in it]


@pytest.mark.parametrize("kernel", KERNELS)
def test_shapes_and_last_partial_batch(kernel):
    x, y = images(50), np.arange(50).reshape(50, 1)
    it = ArrayIterator(x, y, batch_size=16, augment=Augment(pad=2, crop=(6, 5), flip=True), kernel=kernel)
    assert len(it) == 4 and it.output_shape == (6, 5, 3)
    batches = epoch(it)
    assert [len(xb) for xb, _ in batches] == [16, 16, 16, 2]
    for xb, yb in batches:
        assert xb.dtype == np.float32 and xb.shape[1:] == (6, 5, 3)
        assert yb.shape == (len(xb), 1) and yb.dtype == y.dtype


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("prefetch", [False, True])
def test_every_sample_once_per_epoch(kernel, prefetch):
    x = images(37)
    it = ArrayIterator(x, np.arange(37), batch_size=8, seed=4, augment=Augment(pad=1, flip=True),
                       kernel=kernel, prefetch=prefetch)
    orders = []
    for _ in range(2):
        labels = np.concatenate([yb for _, yb in epoch(it)])
        assert sorted(labels.tolist()) == list(range(37))
        orders.append(labels)
    assert not np.array_equal(orders[0], orders[1]), "shuffle=True must reshuffle every epoch"


@pytest.mark.parametrize("kernel", KERNELS)
def test_normalization_and_order_without_shuffle(kernel):
    x = images(10)
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
    it = ArrayIterator(x, None, batch_size=4, shuffle=False, mean=mean, std=std, kernel=kernel)
    got = np.concatenate([xb for xb, yb in epoch(it)])
    assert all(yb is None for _, yb in epoch(it))
    expected = (x.astype(np.float64) / 255 - mean) / std
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    plain = np.concatenate([xb for xb, _ in epoch(ArrayIterator(x, shuffle=False, kernel=kernel))])
    np.testing.assert_allclose(plain, x / 255.0, rtol=1e-6, atol=1e-7)
    xf = images(10, dtype=np.float64)
    floats = np.concatenate([xb for xb, _ in epoch(ArrayIterator(xf, shuffle=False, kernel=kernel))])
    np.testing.assert_allclose(floats, xf.astype(np.float32), rtol=0, atol=0)


def test_channel_stats_matches_numpy():
    x = images(30)
    mean, std = channel_stats(x)
    scaled = x.astype(np.float64) / 255
    np.testing.assert_allclose(mean, scaled.mean(axis=(0, 1, 2)), rtol=1e-6)
    np.testing.assert_allclose(std, scaled.std(axis=(0, 1, 2)), rtol=1e-5)
    it = ArrayIterator(x, batch_size=30, shuffle=False, mean=mean, std=std)
    xb, _ = next(iter(it))
    np.testing.assert_allclose(xb.mean(axis=(0, 1, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(xb.std(axis=(0, 1, 2)), 1, atol=1e-4)


@pytest.mark.parametrize("kernel", KERNELS)
def test_pad_crop_flip_on_a_handmade_image(kernel):
    x = np.arange(12, dtype=np.uint8).reshape(1, 3, 4, 1)  # rows [0 1 2 3], [4 5 6 7], [8 9 10 11]
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    out = np.empty((2, 3, 4, 1), np.float32)
    augment_batch(out, x, np.array([0, 0]), crop_y=np.array([0, 2]), crop_x=np.array([0, 2]),
                  flip=np.array([0, 1]), scale=one, shift=zero, pad=1, kernel=kernel)
    # sample 0: window at (0, 0) of the padded 5x6 image; sample 1: window at (2, 2), mirrored
    np.testing.assert_array_equal(out[0, :, :, 0], [[0, 0, 0, 0], [0, 0, 1, 2], [0, 4, 5, 6]])
    np.testing.assert_array_equal(out[1, :, :, 0], [[0, 7, 6, 5], [0, 11, 10, 9], [0, 0, 0, 0]])
    # channels keep their order when a pixel is mirrored; normalization applies per channel
    rgb = np.array([[[[1, 2, 3], [4, 5, 6]]]], dtype=np.uint8)  # (1, 1, 2, 3)
    out = np.empty((1, 1, 2, 3), np.float32)
    augment_batch(out, rgb, np.array([0]), np.array([0]), np.array([0]), np.array([1]),
                  scale=np.array([1, 10, 100], np.float32), shift=np.array([0, 0, -1], np.float32),
                  pad=0, kernel=kernel)
    np.testing.assert_array_equal(out[0, 0], [[4, 50, 599], [1, 20, 299]])


@pytest.mark.parametrize("kernel", KERNELS)
def test_random_crops_are_windows_of_the_padded_image(kernel):
    x = images(64, h=6, w=6, c=2)
    it = ArrayIterator(x, np.arange(64), batch_size=64, seed=1, kernel=kernel,
                       augment=Augment(pad=2, crop=(6, 6), flip=True))
    (xb, yb), = epoch(it)
    padded = np.pad(x / 255.0, ((0, 0), (2, 2), (2, 2), (0, 0)))
    corners, flips = set(), 0
    for out, label in zip(xb, yb):
        matches = [(cy, cx, f) for cy in range(5) for cx in range(5) for f in (0, 1)
                   if np.allclose(out, padded[label, cy:cy + 6, cx:cx + 6][:, ::-1 if f else 1])]
        assert matches, "an output is no window of its padded image"
        corners.add(matches[0][:2])
        flips += matches[0][2]
    assert len(corners) > 10 and 10 < flips < 54


def test_center_crop_for_evaluation():
    x = images(5, h=32, w=32)
    train = Augment(crop=(24, 24), flip=True)
    it = ArrayIterator(x, shuffle=False, augment=train.for_evaluation(), batch_size=5)
    (xb, _), = epoch(it)
    np.testing.assert_allclose(xb, x[:, 4:28, 4:28] / 255.0, rtol=1e-6)
    assert Augment(pad=4, crop=(32, 32), flip=True).for_evaluation().get_config() == \
        {"pad": 4, "crop": (32, 32), "flip": False, "random_crop": False}
    (xb, _), = epoch(ArrayIterator(x, shuffle=False, batch_size=5,
                                   augment=Augment(pad=4, crop=(32, 32)).for_evaluation()))
    np.testing.assert_allclose(xb, x / 255.0, rtol=1e-6)


@needs_c
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("augment", [None, Augment(pad=4, crop=(32, 32), flip=True),
                                     Augment(crop=(24, 24), flip=True), Augment(pad=3, crop=(30, 36))])
def test_c_kernel_matches_numpy_reference(dtype, augment):
    x = images(40, h=32, w=32, dtype=dtype)
    kwargs = dict(batch_size=16, seed=7, augment=augment, mean=[0.4, 0.5, 0.6], std=[0.2, 0.3, 0.25])
    fast = epoch(ArrayIterator(x, np.arange(40), kernel="c", **kwargs))
    slow = epoch(ArrayIterator(x, np.arange(40), kernel="numpy", **kwargs))
    for (xc, yc), (xn, yn) in zip(fast, slow):
        np.testing.assert_array_equal(yc, yn)
        np.testing.assert_allclose(xc, xn, rtol=1e-6, atol=1e-6)


@needs_c
def test_c_kernel_uses_several_threads_on_large_batches():
    # above AUGMENT_PARALLEL_MIN_FLOATS the C loop runs under OpenMP; results stay identical
    x = images(1500, h=32, w=32)
    rng = np.random.default_rng(0)
    rows = rng.permutation(1500)
    cy, cx = rng.integers(0, 9, 1500), rng.integers(0, 9, 1500)
    flip = rng.integers(0, 2, 1500)
    scale, shift = np.full(3, 1 / 255, np.float32), np.zeros(3, np.float32)
    out_c = augment_batch(np.empty((1500, 32, 32, 3), np.float32), x, rows, cy, cx, flip, scale, shift, 4, "c")
    out_n = augment_reference(np.empty((1500, 32, 32, 3), np.float32), x, rows, cy, cx, flip, scale, shift, 4)
    np.testing.assert_allclose(out_c, out_n, rtol=1e-6, atol=1e-7)


def test_same_seed_same_batches_other_seed_other_batches():
    x, y = images(30), np.arange(30)
    kwargs = dict(batch_size=8, augment=Augment(pad=2, crop=(8, 6), flip=True))
    a = [epoch(ArrayIterator(x, y, seed=3, **kwargs)) for _ in range(2)]
    b = epoch(ArrayIterator(x, y, seed=4, **kwargs))
    for (xa, ya), (xb, yb) in zip(*a):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)
    assert not np.array_equal(np.concatenate([v for _, v in a[0]]), np.concatenate([v for _, v in b]))


def test_state_round_trip_continues_the_same_data_order():
    x, y = images(30), np.arange(30)
    kwargs = dict(batch_size=8, augment=Augment(pad=2, crop=(8, 6), flip=True))
    first = ArrayIterator(x, y, seed=11, **kwargs)
    epoch(first)
    state = first.get_state()
    second_epoch = epoch(first)

    resumed = ArrayIterator(x, y, seed=999, **kwargs)
    resumed.set_state(state)
    resumed.on_epoch_begin(1)
    resumed.on_epoch_begin(1)  # a second call must not draw another epoch
    for (xa, ya), (xb, yb) in zip(second_epoch, epoch(resumed)):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)


def test_state_taken_before_an_interrupted_epoch_repeats_it():
    x, y = images(30), np.arange(30)
    it = ArrayIterator(x, y, batch_size=8, seed=5)
    before = it.get_state()  # what Model.fit keeps while an epoch runs
    it.on_epoch_begin(0)
    assert it.get_state() == before  # drawn but not iterated
    batches = iter(it)
    first = next(batches)[1].copy()
    batches.close()  # interrupted mid-epoch
    assert it.get_state() != before  # the next epoch is a new draw
    again = ArrayIterator(x, y, batch_size=8, seed=0)
    again.set_state(before)
    np.testing.assert_array_equal(next(iter(again))[1], first)


def test_state_is_plain_data():
    import json
    it = ArrayIterator(images(4), batch_size=2, seed=1)
    state = json.loads(json.dumps(it.get_state()))
    it.set_state(state)
    with pytest.raises(ValueError, match="set_state"):
        it.set_state({"version": 1, "rng": {"bit_generator": "MT19937"}})
    with pytest.raises(ValueError, match="set_state"):
        it.set_state([1, 2])


@pytest.mark.parametrize("kernel", KERNELS)
def test_prefetch_yields_the_same_batches(kernel):
    x, y = images(70), np.arange(70)
    kwargs = dict(batch_size=8, seed=2, augment=Augment(pad=2, crop=(8, 6), flip=True), kernel=kernel)
    with_thread = epoch(ArrayIterator(x, y, prefetch=True, **kwargs))
    without = epoch(ArrayIterator(x, y, prefetch=False, **kwargs))
    assert len(with_thread) == len(without) == 9
    for (xa, ya), (xb, yb) in zip(with_thread, without):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)


def test_prefetch_buffers_are_not_overwritten_while_in_use():
    # a slow consumer that checks its batch after the producer had time to run ahead
    x, y = images(64, h=4, w=4), np.arange(64)
    reference = epoch(ArrayIterator(x, y, batch_size=4, shuffle=False, prefetch=False))
    it = ArrayIterator(x, y, batch_size=4, shuffle=False, prefetch=True)
    for (xb, yb), (xr, yr) in zip(it, reference):
        threading.Event().wait(0.005)
        np.testing.assert_array_equal(xb, xr)
        np.testing.assert_array_equal(yb, yr)


def test_prefetch_thread_stops_when_the_consumer_leaves_early_or_fails():
    x, y = images(64), np.arange(64)
    it = ArrayIterator(x, y, batch_size=4, prefetch=True)
    before = threading.active_count()
    batches = iter(it)
    next(batches)
    batches.close()
    assert threading.active_count() == before

    def broken(plan, b):
        raise RuntimeError(f"batch {b} failed")

    it._build_batch = broken
    with pytest.raises(RuntimeError, match="batch 0 failed"):
        epoch(it)
    assert threading.active_count() == before


@pytest.mark.parametrize("kwargs, argument", [
    (dict(x=np.zeros((4, 8, 8), np.uint8)), "x must be images of shape"),
    (dict(x=np.zeros((0, 8, 8, 3), np.uint8)), "x is empty"),
    (dict(x=np.zeros((4, 8, 8, 3), np.int64)), "x must be uint8 or floating point, got int64"),
    (dict(y=np.arange(3)), r"y must have one row per image.*\(4, 8, 8, 3\).*\(3,\)"),
    (dict(batch_size=0), "batch_size must be a positive int, got 0"),
    (dict(batch_size=-2), "batch_size"),
    (dict(batch_size=1.5), "batch_size"),
    (dict(mean=[0.1, 0.2]), r"mean must be a scalar or have 3 values.*\(2,\)"),
    (dict(std=[0.1, 0.0, 0.2]), "std must be > 0"),
    (dict(std=float("nan")), "std must be finite"),
    (dict(augment="flip"), "augment must be None or an Augment"),
    (dict(augment=Augment(pad=1, crop=(11, 8))), r"crop \(11, 8\) is larger than the padded image \(10, 10\)"),
    (dict(kernel="gpu"), "kernel must be"),
])
def test_argument_validation(kwargs, argument):
    arguments = dict(x=np.zeros((4, 8, 8, 3), np.uint8), y=np.arange(4))
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=argument):
        ArrayIterator(**arguments)


@pytest.mark.parametrize("kwargs, message", [
    (dict(pad=-1), "pad must be an int >= 0"),
    (dict(crop=(0, 4)), "crop must be None or"),
    (dict(crop=(1, 2, 3)), "crop must be None or"),
])
def test_augment_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Augment(**kwargs)
