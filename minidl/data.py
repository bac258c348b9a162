"""Minibatch iterators over in-memory image arrays, with augmentation done on the fly.

The batch-iterator protocol that Model.fit / evaluate understand, in place of (x, y) arrays
(any object that follows it works, not only ArrayIterator):

    len(it)                   number of batches in one epoch
    iter(it)                  one epoch of (x_batch, y_batch) pairs of numpy arrays;
                              y_batch is None when the iterator has no labels
    it.on_epoch_begin(epoch)  optional; fit calls it before each epoch (0-based epoch number).
                              ArrayIterator draws the epoch's order, crops and flips there.
    it.get_state()            optional; a JSON-serialisable object that fit stores in its
    it.set_state(state)       checkpoints so that a resumed run sees the same data order

ArrayIterator yields batches from three preallocated, rotating output buffers; a yielded
batch stays valid until the next batch is requested (copy it to keep it longer), and one
iterator runs one epoch at a time. With prefetch=True the next batch is built in a
background thread while the current one trains.
"""

import copy
import queue
import threading

import numpy as np

from .backends.cpu import _ffi as _cpu  # the C kernels, when built from csrc/ by setup.py

_lib = _cpu.lib if hasattr(_cpu.lib, "minidl_augment_batch_u8") else None  # None: not built

_NUM_BUFFERS = 3  # the consumer's batch, the queued batch, the batch being built
_STATE_VERSION = 1


def c_kernels_available():
    """True when csrc/augment.c is compiled into minidl._cpu_kernels."""
    return _lib is not None


class Augment:
    """Per-sample augmentation: zero-pad, crop, mirror.

    pad:          pixels of zeros added on each side (in the normalized output) before cropping.
    crop:         (height, width) of the window cut from the padded image; None keeps its size.
    flip:         mirror each image left-right with probability 1/2.
    random_crop:  window at a random place (training) or in the centre (evaluation).

    Augment(pad=4, crop=(32, 32), flip=True) is the usual CIFAR-10 training augmentation;
    Augment(crop=(24, 24), flip=True) cuts random 24x24 windows as TensorFlow's CIFAR-10
    tutorial does, and its for_evaluation() takes the centre 24x24 at test time.
    """

    def __init__(self, pad=0, crop=None, flip=False, random_crop=True):
        if isinstance(pad, bool) or not isinstance(pad, (int, np.integer)) or pad < 0:
            raise ValueError(f"Augment: pad must be an int >= 0, got {pad!r}")
        if crop is not None:
            if isinstance(crop, (int, np.integer)):
                crop = (crop, crop)
            crop = tuple(crop)
            if len(crop) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                         and v > 0 for v in crop):
                raise ValueError(f"Augment: crop must be None or (height, width) of positive ints, got {crop!r}")
            crop = (int(crop[0]), int(crop[1]))
        self.pad = int(pad)
        self.crop = crop
        self.flip = bool(flip)
        self.random_crop = bool(random_crop)

    def output_size(self, height, width):
        """(height, width) of the augmented images made from height x width inputs."""
        padded = (height + 2 * self.pad, width + 2 * self.pad)
        if self.crop is None:
            return padded
        if self.crop[0] > padded[0] or self.crop[1] > padded[1]:
            raise ValueError(
                f"Augment: crop {self.crop} is larger than the padded image {padded} "
                f"({height}x{width} images with pad={self.pad})")
        return self.crop

    def for_evaluation(self):
        """The test-time counterpart: same pad and crop size, centred window, no flip."""
        return Augment(pad=self.pad, crop=self.crop, flip=False, random_crop=False)

    def get_config(self):
        return {"pad": self.pad, "crop": self.crop, "flip": self.flip, "random_crop": self.random_crop}

    def __repr__(self):
        return "Augment(" + ", ".join(f"{k}={v!r}" for k, v in self.get_config().items()) + ")"


def channel_stats(x, chunk=1024):
    """Per-channel (mean, std) of images x (N, H, W, C), as float32 arrays of shape (C,).

    uint8 images are measured after scaling by 1/255, the units ArrayIterator's mean and std
    are given in; float images as they are. Sums in float64, `chunk` images at a time.
    """
    x = _check_images(x, "channel_stats")
    channels = x.shape[-1]
    total = np.zeros(channels)
    total_sq = np.zeros(channels)
    for start in range(0, x.shape[0], chunk):
        part = x[start:start + chunk].reshape(-1, channels).astype(np.float32)
        total += part.sum(axis=0, dtype=np.float64)
        total_sq += np.einsum("ij,ij->j", part, part, dtype=np.float64)
    count = x.shape[0] * x.shape[1] * x.shape[2]
    mean = total / count
    std = np.sqrt(np.maximum(total_sq / count - np.square(mean), 0.0))
    unit = 1.0 / 255.0 if x.dtype == np.uint8 else 1.0
    return (mean * unit).astype(np.float32), (std * unit).astype(np.float32)


def augment_batch(out, x, rows, crop_y, crop_x, flip, scale, shift, pad, kernel="auto"):
    """Build one batch into `out` with the C kernel (kernel "c", or "auto" when it is built)
    or with augment_reference (kernel "numpy"); see augment_reference for the arguments.

    Every size, row and crop corner is checked first (ValueError naming the argument): rows
    must index x, every crop window must lie inside the padded image, and rows, crop_y,
    crop_x and flip hold one entry per image of out.
    """
    if kernel not in ("auto", "c", "numpy"):
        raise ValueError(f"augment_batch: kernel must be 'auto', 'c' or 'numpy', got {kernel!r}")
    rows, crop_y, crop_x, flip, scale, shift, pad = _checked_batch_args(
        out, x, rows, crop_y, crop_x, flip, scale, shift, pad)
    if kernel == "numpy" or (kernel == "auto" and _lib is None):
        return augment_reference(out, x, rows, crop_y, crop_x, flip, scale, shift, pad)
    if _lib is None:
        raise RuntimeError(
            "augment_batch: kernel='c' needs csrc/augment.c compiled into minidl._cpu_kernels; "
            "run `pip install -e .` (or `python setup.py build_ext --inplace`) in the checkout")
    op = "augment_batch"
    if x.dtype == np.uint8:
        c_function, source = _lib.minidl_augment_batch_u8, _cpu.checked(op, "x", x, dtype=_cpu.UINT8)
    elif x.dtype == np.float32:
        c_function, source = _lib.minidl_augment_batch_f32, _cpu.checked(op, "x", x)
    else:
        raise ValueError(f"{op}: kernel='c' needs uint8 or float32 images x, got {x.dtype}")
    _, height, width, channels = x.shape
    status = c_function(
        _cpu.output(op, "out", out), source, _cpu.checked(op, "rows", rows, dtype=_cpu.INT64),
        _cpu.checked(op, "crop_y", crop_y, dtype=_cpu.INT32), _cpu.checked(op, "crop_x", crop_x, dtype=_cpu.INT32),
        _cpu.checked(op, "flip", flip, dtype=_cpu.UINT8), _cpu.checked(op, "scale", scale),
        _cpu.checked(op, "shift", shift), len(rows), height, width, channels, pad, out.shape[1], out.shape[2])
    if status:
        _cpu.raise_for_status(op, status, f"scale and shift rows of {width}x{channels} floats")
    return out


def _checked_batch_args(out, x, rows, crop_y, crop_x, flip, scale, shift, pad):
    """augment_batch's arguments checked against each other, the index arrays converted to the
    C kernel's dtypes; raises ValueError (TypeError for a wrong type) naming the argument."""
    op = "augment_batch"
    for name, array in (("out", out), ("x", x)):
        if not isinstance(array, np.ndarray) or array.ndim != 4:
            raise ValueError(f"{op}: {name} must be a 4-D (N, height, width, channels) numpy array, "
                             f"got {type(array).__name__} of shape {np.shape(array)}")
    if out.dtype != np.float32:
        raise ValueError(f"{op}: out must be float32, got {out.dtype}")
    batch, out_h, out_w, channels = out.shape
    n, height, width = x.shape[:3]
    if x.shape[3] != channels:
        raise ValueError(f"{op}: out {out.shape} and x {x.shape} must have the same channels")
    if isinstance(pad, bool) or not isinstance(pad, (int, np.integer)) or pad < 0:
        raise ValueError(f"{op}: pad must be an int >= 0, got {pad!r}")
    pad = int(pad)
    if out_h > height + 2 * pad or out_w > width + 2 * pad:
        raise ValueError(f"{op}: out images {out_h}x{out_w} are larger than the padded images "
                         f"{height + 2 * pad}x{width + 2 * pad} of x {x.shape} with pad={pad}")
    checked = []
    for name, values, dtype, high in (("rows", rows, np.int64, n - 1),
                                      ("crop_y", crop_y, np.int32, height + 2 * pad - out_h),
                                      ("crop_x", crop_x, np.int32, width + 2 * pad - out_w),
                                      ("flip", flip, np.uint8, None)):
        values = np.asarray(values)
        if values.shape != (batch,):
            raise ValueError(f"{op}: {name} must have shape ({batch},), one entry per image of out "
                             f"{out.shape}, got shape {values.shape}")
        if values.dtype.kind not in ("iu" if high is not None else "biu"):
            raise ValueError(f"{op}: {name} must hold integers, got {values.dtype}")
        if high is not None and batch and (values.min() < 0 or values.max() > high):
            raise ValueError(f"{op}: {name} must lie in [0, {high}] for x {x.shape}, out {out.shape} "
                             f"and pad={pad}, got values in [{values.min()}, {values.max()}]")
        checked.append(np.ascontiguousarray(values, dtype=dtype))
    for name, values in (("scale", scale), ("shift", shift)):
        values = np.ascontiguousarray(values, dtype=np.float32)
        if values.shape != (channels,):
            raise ValueError(f"{op}: {name} must have shape ({channels},), one value per channel, "
                             f"got shape {values.shape}")
        checked.append(values)
    return (*checked, pad)


def augment_reference(out, x, rows, crop_y, crop_x, flip, scale, shift, pad):
    """The numpy version of csrc/augment.c: the fallback path and the reference of the tests.

    out (B, OH, OW, C) float32 receives, for each k, image x[rows[k]] converted to float,
    normalized as pixel * scale + shift per channel, zero-padded by `pad`, cropped at
    (crop_y[k], crop_x[k]) of the padded image and mirrored left-right where flip[k].
    """
    out_h, out_w = out.shape[1], out.shape[2]
    images = x[rows].astype(np.float32) * scale + shift
    if pad:
        images = np.pad(images, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    for k in range(len(rows)):
        window = images[k, crop_y[k]:crop_y[k] + out_h, crop_x[k]:crop_x[k] + out_w]
        out[k] = window[:, ::-1] if flip[k] else window
    return out


class ArrayIterator:
    """Shuffled, normalized, augmented minibatches of in-memory images (like Neon's ArrayIterator).

    x:           images (N, H, W, C), uint8 or floating point (kept by reference, not copied;
                 float images are converted to one float32 copy if they are not float32).
    y:           labels with N rows (any dtype and trailing shape), or None.
    batch_size:  images per batch; the last batch of an epoch holds the remainder.
    shuffle:     a new random order every epoch (else the order of x).
    seed:        seed of the iterator's own numpy Generator, which draws the order, the crop
                 corners and the flips; its state is exposed by get_state()/set_state().
    augment:     None or an Augment.
    mean, std:   per-channel (or scalar) normalization: out = (x / 255 - mean) / std for uint8
                 images, (x - mean) / std for float images; channel_stats() computes them.
                 Without them uint8 images become x / 255 and float images are unchanged.
    prefetch:    build the next batch in a background thread.
    kernel:      "auto" (the C kernel of csrc/augment.c when built, else numpy), "c" or "numpy".

    Yields (x_batch float32 (B, OH, OW, C), y_batch) where (OH, OW) is the augmented size.
    """

    def __init__(self, x, y=None, batch_size=128, shuffle=True, seed=None, augment=None,
                 mean=None, std=None, prefetch=True, kernel="auto"):
        x = _check_images(x, "ArrayIterator")
        if x.dtype != np.uint8 and x.dtype != np.float32:
            x = x.astype(np.float32)
        self.x = np.ascontiguousarray(x)
        n, height, width, channels = self.x.shape

        if y is not None:
            y = np.asarray(y)
            if y.ndim == 0 or y.shape[0] != n:
                raise ValueError(
                    f"ArrayIterator: y must have one row per image of x: x has shape {self.x.shape}, "
                    f"y has shape {y.shape}")
            y = np.ascontiguousarray(y)
        self.y = y

        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"ArrayIterator: batch_size must be a positive int, got {batch_size!r}")
        self.batch_size = int(batch_size)

        if augment is not None and not isinstance(augment, Augment):
            raise ValueError(f"ArrayIterator: augment must be None or an Augment, got {type(augment).__name__}")
        self.augment = augment
        self._pad = augment.pad if augment is not None else 0
        self.output_shape = (augment.output_size(height, width) if augment is not None
                             else (height, width)) + (channels,)

        self._scale, self._shift = _normalization(mean, std, channels, self.x.dtype)
        self.mean, self.std = mean, std

        if kernel not in ("auto", "c", "numpy"):
            raise ValueError(f"ArrayIterator: kernel must be 'auto', 'c' or 'numpy', got {kernel!r}")
        if kernel == "c" and _lib is None:
            raise RuntimeError(
                "ArrayIterator: kernel='c' needs csrc/augment.c compiled into minidl._cpu_kernels; "
                "run `pip install -e .` (or `python setup.py build_ext --inplace`) in the checkout")
        self._use_c = _lib is not None and kernel != "numpy"

        self.shuffle = bool(shuffle)
        self.prefetch = bool(prefetch)
        self._rng = np.random.default_rng(seed)
        self._pending = None         # an epoch plan drawn by on_epoch_begin, not yet iterated
        self._epoch_start_state = None   # Generator state before the pending plan was drawn
        self._buffers = None

    # ---- the protocol -------------------------------------------------------------------
    @property
    def num_samples(self):
        return self.x.shape[0]

    def __len__(self):
        return -(-self.num_samples // self.batch_size)

    def on_epoch_begin(self, epoch=None):
        """Draw the coming epoch's order, crops and flips (unless already drawn)."""
        if self._pending is None:
            self._pending = self._draw_plan()

    def __iter__(self):
        plan = self._pending if self._pending is not None else self._draw_plan()
        self._pending = None
        if self._buffers is None:
            self._buffers = self._allocate_buffers()
        if self.prefetch and len(self) > 1:
            return self._iterate_prefetched(plan)
        return self._iterate(plan)

    def get_state(self):
        """The Generator state from which the next epoch will be drawn.

        When an epoch was drawn by on_epoch_begin but not iterated yet, that is the state from
        before the draw, so set_state() followed by on_epoch_begin() draws it again. To repeat
        an epoch that gets interrupted, take the state before it begins (as Model.fit does).
        """
        state = self._epoch_start_state if self._pending is not None else self._rng.bit_generator.state
        return {"version": _STATE_VERSION, "rng": copy.deepcopy(state)}

    def set_state(self, state):
        """Continue from a state returned by get_state(); drops an epoch drawn but not iterated."""
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION or "rng" not in state:
            raise ValueError(f"ArrayIterator.set_state: expected a dict from get_state(), got {state!r}")
        try:
            self._rng.bit_generator.state = copy.deepcopy(state["rng"])
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"ArrayIterator.set_state: state['rng'] is not a "
                             f"{type(self._rng.bit_generator).__name__} state: {exc}") from None
        self._pending = None

    # ---- one epoch ----------------------------------------------------------------------
    def _draw_plan(self):
        """Every random choice of one epoch, drawn in a fixed order from the Generator."""
        self._epoch_start_state = copy.deepcopy(self._rng.bit_generator.state)
        n = self.num_samples
        order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        height, width = self.x.shape[1:3]
        out_h, out_w = self.output_shape[:2]
        span_y = height + 2 * self._pad - out_h  # the crop corner lies in 0..span
        span_x = width + 2 * self._pad - out_w
        if self.augment is not None and self.augment.random_crop:
            crop_y = self._rng.integers(0, span_y + 1, size=n, dtype=np.int32)
            crop_x = self._rng.integers(0, span_x + 1, size=n, dtype=np.int32)
        else:
            crop_y = np.full(n, span_y // 2, dtype=np.int32)
            crop_x = np.full(n, span_x // 2, dtype=np.int32)
        if self.augment is not None and self.augment.flip:
            flip = (self._rng.random(n) < 0.5).astype(np.uint8)
        else:
            flip = np.zeros(n, dtype=np.uint8)
        return order.astype(np.int64), crop_y, crop_x, flip

    def _allocate_buffers(self):
        # a batch never holds more than every sample: batch_size=10**9 on 2 images needs 2 rows
        rows = max(1, min(self.batch_size, self.num_samples))
        xs = [np.empty((rows,) + self.output_shape, dtype=np.float32) for _ in range(_NUM_BUFFERS)]
        if self.y is None:
            return [(xb, None) for xb in xs]
        return [(xb, np.empty((rows,) + self.y.shape[1:], dtype=self.y.dtype)) for xb in xs]

    def _build_batch(self, plan, b):
        """Fill buffer b % 3 with batch b of the epoch `plan`; return views of its used part."""
        order, crop_y, crop_x, flip = plan
        s = slice(b * self.batch_size, min((b + 1) * self.batch_size, self.num_samples))
        rows, cy, cx, fl = order[s], crop_y[s], crop_x[s], flip[s]
        x_buf, y_buf = self._buffers[b % _NUM_BUFFERS]
        count = len(rows)
        out_x = x_buf[:count]
        augment_batch(out_x, self.x, rows, cy, cx, fl, self._scale, self._shift, self._pad,
                      kernel="c" if self._use_c else "numpy")
        if y_buf is None:
            return out_x, None
        out_y = y_buf[:count]
        np.take(self.y, rows, axis=0, out=out_y)
        return out_x, out_y

    def _iterate(self, plan):
        for b in range(len(self)):
            yield self._build_batch(plan, b)

    def _iterate_prefetched(self, plan):
        # A queue of one batch plus three rotating buffers: the producer starts refilling a
        # buffer only after the consumer took the batch that followed it, i.e. once the
        # consumer asked for a newer batch and is done with that buffer.
        ready = queue.Queue(maxsize=1)
        stop = threading.Event()

        def put(item):
            while not stop.is_set():
                try:
                    ready.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def produce():
            try:
                for b in range(len(self)):
                    if not put(self._build_batch(plan, b)):
                        return
                put(_END)
            except BaseException as exc:  # handed to the consumer, which re-raises it
                put(_Failure(exc))

        worker = threading.Thread(target=produce, name="minidl-prefetch", daemon=True)
        worker.start()
        try:
            while True:
                item = ready.get()
                if item is _END:
                    break
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        finally:
            stop.set()
            worker.join()

    def __repr__(self):
        return (f"ArrayIterator({self.num_samples} images {self.x.shape[1:]} {self.x.dtype} -> "
                f"{self.output_shape}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
                f"augment={self.augment!r}, kernel={'c' if self._use_c else 'numpy'})")


_END = object()


class _Failure:
    def __init__(self, exc):
        self.exc = exc


def _check_images(x, where):
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"{where}: x must be images of shape (N, height, width, channels), got shape {x.shape}")
    if x.shape[0] == 0 or 0 in x.shape[1:]:
        raise ValueError(f"{where}: x is empty (shape {x.shape})")
    if x.dtype != np.uint8 and x.dtype.kind != "f":
        raise ValueError(f"{where}: x must be uint8 or floating point, got {x.dtype}")
    return x


def _normalization(mean, std, channels, dtype):
    """Per-channel float32 (scale, shift) with normalized = pixel * scale + shift."""
    unit = 1.0 / 255.0 if dtype == np.uint8 else 1.0

    def per_channel(value, name, default):
        if value is None:
            return np.full(channels, default, dtype=np.float64)
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"ArrayIterator: {name} must be a number or one number per channel, "
                            f"got {value!r}") from None
        if arr.ndim == 0:
            arr = np.full(channels, float(arr))
        if arr.shape != (channels,):
            raise ValueError(f"ArrayIterator: {name} must be a scalar or have {channels} values "
                             f"(one per channel), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"ArrayIterator: {name} must be finite, got {arr.tolist()}")
        return arr

    mean = per_channel(mean, "mean", 0.0)
    std = per_channel(std, "std", 1.0)
    if np.any(std <= 0):
        raise ValueError(f"ArrayIterator: std must be > 0 in every channel, got {std.tolist()}")
    return (unit / std).astype(np.float32), (-mean / std).astype(np.float32)
