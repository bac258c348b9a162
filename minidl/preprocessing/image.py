"""Keras 2's keras.preprocessing.image: ImageDataGenerator, its flow() iterator, and the
image file helpers (load_img, img_to_array, array_to_img, save_img; see image_files.py).

ImageDataGenerator is a host-side pipeline like minidl.data.ArrayIterator, and flow() returns
an ArrayIterator subclass, so fit / evaluate / predict take it as they take ArrayIterator, with
its prefetching and its resumable state. Each epoch's random choices (order, rotation, shifts,
shear, zoom, flips, channel shifts) are drawn up front from the iterator's numpy Generator;
the geometric ones become one projective transform per image, which the C kernel of the cpu
backend (csrc/image_transform.c, bilinear, Keras's fill modes) applies to each batch.

Keras 2 semantics: transforms act on the raw images about their centre; standardize then
applies rescale, samplewise_center / samplewise_std_normalization and the featurewise
statistics from fit(x) (computed after rescale), in that order.
"""

import copy
import math
import numbers
import warnings

import numpy as np

from ..backends.contract.images import FILL_MODES, INTERPOLATIONS, check_transform
from ..backends.numpy_ops.images import transform_forward as _transform_reference
from ..data import ArrayIterator
from .image_files import array_to_img, img_to_array, load_img, save_img
from .smart_resize import smart_resize

try:
    from minidl._cpu_kernels import ffi as _ffi, lib as _lib
    if not hasattr(_lib, "minidl_image_transform_forward"):   # a build older than this module
        _ffi = _lib = None
except ImportError:
    _ffi = _lib = None

STD_EPSILON = 1e-6   # Keras 2 divides by std + 1e-6


def _nonnegative(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < math.inf:
        raise ValueError(f"ImageDataGenerator: {name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _finite(value, name):
    """A finite float: an inf or NaN range would make every batch NaN, or fail in numpy's
    random draws only at the first batch."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"ImageDataGenerator: {name} must be a finite number, got {value!r}")
    return float(value)


class ImageDataGenerator:
    """Real-time image augmentation and standardization (Keras 2's ImageDataGenerator).

    rotation_range: degrees; width_shift_range / height_shift_range: a fraction of the size
    when < 1, else pixels; shear_range: degrees (counter-clockwise shear); zoom_range: a number
    z ([1 - z, 1 + z]) or (lower, upper), drawn for each axis; channel_shift_range: a value added
    to every channel, clipped to the image's range; brightness_range: (lower, upper), each
    image's brightness scaled by a factor drawn from it, as Keras 2 does it through Pillow
    (pixels quantized to 0..255, see brightness_shift); fill_mode "nearest", "reflect", "wrap" or
    "constant" (with cval); validation_split: the fraction flow(subset="validation") serves.
    zca_whitening (with zca_epsilon): fit(x) learns Keras 2's ZCA matrix of the centred images
    (it turns featurewise_center on and featurewise_std_normalization off, as Keras does), and
    standardize multiplies each flattened image by it.
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0, width_shift_range=0.0,
                 height_shift_range=0.0, brightness_range=None, shear_range=0.0, zoom_range=0.0,
                 channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None,
                 validation_split=0.0, dtype="float32"):
        self.featurewise_center = bool(featurewise_center)
        self.samplewise_center = bool(samplewise_center)
        self.featurewise_std_normalization = bool(featurewise_std_normalization)
        self.samplewise_std_normalization = bool(samplewise_std_normalization)
        self.zca_whitening = bool(zca_whitening)
        self.zca_epsilon = _nonnegative(zca_epsilon, "zca_epsilon")
        self.zca_whitening_matrix = None
        if self.zca_whitening and not self.featurewise_center:
            self.featurewise_center = True
            warnings.warn("ImageDataGenerator: zca_whitening overrides featurewise_center "
                          "(turned on)", stacklevel=2)
        if self.zca_whitening and self.featurewise_std_normalization:
            self.featurewise_std_normalization = False
            warnings.warn("ImageDataGenerator: zca_whitening overrides "
                          "featurewise_std_normalization (turned off)", stacklevel=2)
        if brightness_range is not None and (
                not isinstance(brightness_range, (tuple, list)) or len(brightness_range) != 2
                or not all(isinstance(b, numbers.Real) and not isinstance(b, bool)
                           and math.isfinite(b) for b in brightness_range)):
            raise ValueError("ImageDataGenerator: brightness_range must be None or a tuple or "
                             f"list of two finite floats, got {brightness_range!r}")
        self.brightness_range = None if brightness_range is None else tuple(
            float(b) for b in brightness_range)
        self.rotation_range = _nonnegative(rotation_range, "rotation_range")
        self.width_shift_range = _nonnegative(width_shift_range, "width_shift_range")
        self.height_shift_range = _nonnegative(height_shift_range, "height_shift_range")
        self.shear_range = _nonnegative(shear_range, "shear_range")
        self.channel_shift_range = _nonnegative(channel_shift_range, "channel_shift_range")
        if isinstance(zoom_range, numbers.Real) and not isinstance(zoom_range, bool):
            self.zoom_range = (1 - _nonnegative(zoom_range, "zoom_range"), 1 + float(zoom_range))
        elif isinstance(zoom_range, (tuple, list)) and len(zoom_range) == 2:
            self.zoom_range = tuple(_nonnegative(z, "zoom_range") for z in zoom_range)
        else:
            raise ValueError(f"ImageDataGenerator: zoom_range must be a number or a (lower, upper) "
                             f"pair, got {zoom_range!r}")
        if fill_mode not in FILL_MODES:
            raise ValueError(f"ImageDataGenerator: fill_mode must be one of {list(FILL_MODES)}, "
                             f"got {fill_mode!r}")
        self.fill_mode, self.cval = fill_mode, float(cval)
        self.horizontal_flip, self.vertical_flip = bool(horizontal_flip), bool(vertical_flip)
        self.rescale = None if rescale is None or rescale == 0 else _finite(rescale, "rescale")
        if preprocessing_function is not None and not callable(preprocessing_function):
            raise TypeError("ImageDataGenerator: preprocessing_function must be callable or None")
        self.preprocessing_function = preprocessing_function
        if not 0 <= validation_split < 1:
            raise ValueError(f"ImageDataGenerator: validation_split must be in [0, 1), got "
                             f"{validation_split!r}")
        self.validation_split = float(validation_split)
        if np.dtype(dtype) != np.float32:
            raise ValueError(f"ImageDataGenerator: dtype must be float32, got {dtype!r}")
        self.mean = self.std = None

    # ------------------------------------------------------------------ statistics
    def fit(self, x, augment=False, rounds=1, seed=None):
        """Featurewise mean and std (per channel) of images x (N, H, W, C), after rescale."""
        if augment:
            raise ValueError("ImageDataGenerator.fit: augment=True is not supported; statistics "
                             "are computed on the images as given")
        x = _as_images(x, "ImageDataGenerator.fit")
        scale = self.rescale or 1.0
        flat = x.reshape(-1, x.shape[-1]).astype(np.float64) * scale
        if self.featurewise_center:
            self.mean = flat.mean(axis=0).astype(np.float32)
        if self.featurewise_std_normalization:
            self.std = flat.std(axis=0).astype(np.float32)
        if self.zca_whitening:
            # Keras 2: the SVD of the centred, flattened images (float64 here)
            n = len(x)
            centred = (flat - flat.mean(axis=0)).reshape(n, -1)
            u, s, _ = np.linalg.svd(centred.T, full_matrices=False)
            s_inv = np.sqrt(n) / (s + self.zca_epsilon)
            self.zca_whitening_matrix = ((u * s_inv) @ u.T).astype(np.float32)

    def standardize(self, x):
        """x (N, H, W, C) float32 standardized in place (and returned), as Keras 2."""
        if self.preprocessing_function is not None:
            for i in range(len(x)):
                x[i] = self.preprocessing_function(x[i])
        if self.rescale:
            x *= np.float32(self.rescale)
        if self.samplewise_center:
            x -= x.mean(axis=(1, 2, 3), keepdims=True)
        if self.samplewise_std_normalization:
            x /= x.std(axis=(1, 2, 3), keepdims=True) + np.float32(STD_EPSILON)
        if self.featurewise_center:
            if self.mean is None:
                raise ValueError("ImageDataGenerator: featurewise_center needs fit(x) first")
            x -= self.mean
        if self.featurewise_std_normalization:
            if self.std is None:
                raise ValueError("ImageDataGenerator: featurewise_std_normalization needs fit(x) first")
            x /= self.std + np.float32(STD_EPSILON)
        if self.zca_whitening:
            matrix = self.zca_whitening_matrix
            if matrix is None:
                raise ValueError("ImageDataGenerator: zca_whitening needs fit(x) first")
            flat = x.reshape(len(x), -1)
            if flat.shape[1] != matrix.shape[0]:
                raise ValueError(f"ImageDataGenerator: zca_whitening was fit on images of "
                                 f"{matrix.shape[0]} values, got images of shape {x.shape[1:]}")
            x[...] = (flat @ matrix).reshape(x.shape)
        return x

    # ------------------------------------------------------------------ random transforms
    @property
    def geometric(self):
        return bool(self.rotation_range or self.width_shift_range or self.height_shift_range
                    or self.shear_range or self.zoom_range != (1.0, 1.0)
                    or self.horizontal_flip or self.vertical_flip)

    def draw_transforms(self, rng, n, height, width):
        """(n, 8) transforms of n images (minidl's projective layout) drawn from `rng`, and the
        (n,) channel shifts: Keras 2's get_random_transform + apply_affine_transform."""
        def shift(value, size):
            amount = rng.uniform(-value, value, n) if value else np.zeros(n)
            return amount * size if value < 1 else amount
        theta = np.deg2rad(rng.uniform(-self.rotation_range, self.rotation_range, n)
                           if self.rotation_range else np.zeros(n))
        tx, ty = shift(self.height_shift_range, height), shift(self.width_shift_range, width)
        shear = np.deg2rad(rng.uniform(-self.shear_range, self.shear_range, n)
                           if self.shear_range else np.zeros(n))
        if self.zoom_range != (1.0, 1.0):
            zx, zy = rng.uniform(self.zoom_range[0], self.zoom_range[1], (2, n))
        else:
            zx = zy = np.ones(n)
        flip_h = rng.random(n) < 0.5 if self.horizontal_flip else np.zeros(n, bool)
        flip_v = rng.random(n) < 0.5 if self.vertical_flip else np.zeros(n, bool)
        channel = (rng.uniform(-self.channel_shift_range, self.channel_shift_range, n)
                   if self.channel_shift_range else np.zeros(n))
        # 3x3 matrices on (row, col, 1) coordinates, product taken as Keras 2 does
        eye = np.broadcast_to(np.eye(3), (n, 3, 3))
        rotation, shifting, shearing, zoom = (eye.copy() for _ in range(4))
        rotation[:, 0, 0], rotation[:, 0, 1] = np.cos(theta), -np.sin(theta)
        rotation[:, 1, 0], rotation[:, 1, 1] = np.sin(theta), np.cos(theta)
        shifting[:, 0, 2], shifting[:, 1, 2] = tx, ty
        shearing[:, 0, 1], shearing[:, 1, 1] = -np.sin(shear), np.cos(shear)
        zoom[:, 0, 0], zoom[:, 1, 1] = zx, zy
        m = rotation @ shifting @ shearing @ zoom
        oy, ox = height / 2 - 0.5, width / 2 - 0.5
        offset, reset = eye.copy(), eye.copy()
        offset[:, 0, 2], offset[:, 1, 2] = oy, ox
        reset[:, 0, 2], reset[:, 1, 2] = -oy, -ox
        m = offset @ m @ reset
        # flips act on the output: reading column (W - 1 - c) and row (H - 1 - r)
        flip = eye.copy()
        flip[flip_v, 0, 0], flip[flip_v, 0, 2] = -1, height - 1
        flip[flip_h, 1, 1], flip[flip_h, 1, 2] = -1, width - 1
        m = m @ flip
        t = np.zeros((n, 8), np.float32)   # x = column, y = row
        t[:, 0], t[:, 1], t[:, 2] = m[:, 1, 1], m[:, 1, 0], m[:, 1, 2]
        t[:, 3], t[:, 4], t[:, 5] = m[:, 0, 1], m[:, 0, 0], m[:, 0, 2]
        return t, channel.astype(np.float32)

    # ------------------------------------------------------------------ iterators
    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             subset=None, prefetch=True, kernel="auto"):
        """An iterator of augmented, standardized (x, y) batches that fit / evaluate / predict
        take. subset "training" or "validation" splits off validation_split of x (its first
        part, as Keras 2)."""
        if sample_weight is not None:
            raise ValueError("ImageDataGenerator.flow: sample_weight is not supported")
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle, seed=seed,
                                  subset=subset, prefetch=prefetch, kernel=kernel)


def brightness_shift(x, factors):
    """x (N, H, W, C) float32 with each image's brightness scaled by factors[i] in place, as
    Keras 2's apply_brightness_shift(x, factor, scale=False) does through Pillow: an image
    outside [0, 255] is first stretched to it, the pixels become uint8 (truncated), Pillow's
    blend with black makes trunc(factor * pixel) clipped to [0, 255] in float32 arithmetic,
    and a stretched image is mapped back to its range. An alpha channel (C = 4) is kept."""
    channels = x.shape[-1]
    if channels not in (1, 3, 4):
        raise ValueError(f"ImageDataGenerator: brightness_range needs images with 1, 3 or 4 "
                         f"channels (as Pillow), got shape {x.shape[1:]}")
    low = x.min(axis=(1, 2, 3), keepdims=True)
    high = x.max(axis=(1, 2, 3), keepdims=True)
    stretched = (low < 0) | (high > 255)
    span = high - low
    pixels = np.where(stretched, (x - low) / np.where(span != 0, span, 1) * 255, x)
    pixels = pixels.astype(np.uint8).astype(np.float32)
    colour = slice(0, 3) if channels == 4 else slice(None)
    factor = np.asarray(factors, np.float32).reshape(-1, 1, 1, 1)
    pixels[..., colour] = np.clip(np.trunc(factor * pixels[..., colour]), 0, 255)
    x[...] = np.where(stretched, pixels / 255 * span + low, pixels)
    return x


def transform_images(out, x, transforms, interpolation, fill_mode, cval, use_c=True):
    """out (N, OH, OW, C) = host images x (N, H, W, C) float32 resampled under transforms (N, 8)
    or (1, 8) by the cpu backend's C kernel (the numpy reference when it is not built)."""
    check_transform("transform_images", out.shape, x.shape, transforms.shape, interpolation,
                    fill_mode)
    if use_c and _lib is not None:
        n, h, w, c = x.shape
        status = _lib.minidl_image_transform_forward(
            _ffi.from_buffer("float[]", out, True), _ffi.from_buffer("float[]", x),
            _ffi.from_buffer("float[]", transforms), INTERPOLATIONS.index(interpolation),
            FILL_MODES.index(fill_mode), float(cval), n, h, w, c, out.shape[1], out.shape[2],
            transforms.shape[0])
        if status:   # check_transform refused what the kernel would
            raise RuntimeError(f"transform_images: the kernel returned status {status} for "
                               f"{tuple(x.shape)} -> {tuple(out.shape)}")
    else:
        _transform_reference(out, x, transforms, interpolation, fill_mode, float(cval))
    return out


def _as_images(x, where):
    x = np.asarray(x)
    if x.ndim != 4 or x.shape[0] == 0:
        raise ValueError(f"{where}: x must be a non-empty batch of images (N, H, W, C), got "
                         f"shape {x.shape}")
    if x.dtype.kind not in "uif":
        raise ValueError(f"{where}: x must hold numbers, got dtype {x.dtype}")
    return x


class NumpyArrayIterator(ArrayIterator):
    """ImageDataGenerator.flow's iterator: ArrayIterator's epochs, prefetching and state, with
    the generator's transforms and standardization in place of crops and flips."""

    def __init__(self, x, y, generator, batch_size=32, shuffle=True, seed=None, subset=None,
                 prefetch=True, kernel="auto"):
        x = _as_images(x, "ImageDataGenerator.flow")
        if y is not None and len(y) != len(x):
            raise ValueError(f"ImageDataGenerator.flow: x and y must have the same length, got "
                             f"x {x.shape} and y of length {len(y)}")
        if subset not in (None, "training", "validation"):
            raise ValueError(f"ImageDataGenerator.flow: subset must be None, 'training' or "
                             f"'validation', got {subset!r}")
        if subset is not None:
            split = int(len(x) * generator.validation_split)
            if split == 0:
                raise ValueError("ImageDataGenerator.flow: subset needs validation_split > 0 "
                                 f"leaving images in both parts, got {generator.validation_split} "
                                 f"of {len(x)} images")
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x, y = x[part], (None if y is None else np.asarray(y)[part])
        self.generator = generator
        super().__init__(np.asarray(x, np.float32), y, batch_size=batch_size, shuffle=shuffle,
                         seed=seed, prefetch=prefetch, kernel=kernel)

    def _draw_plan(self):
        self._epoch_start_state = copy.deepcopy(self._rng.bit_generator.state)
        n, height, width = self.x.shape[:3]
        order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        transforms, channel = self.generator.draw_transforms(self._rng, n, height, width)
        brightness = self.generator.brightness_range
        factors = None if brightness is None else self._rng.uniform(*brightness, n)
        return order.astype(np.int64), transforms, channel, factors

    def _build_batch(self, plan, b):
        order, transforms, channel, factors = plan
        s = slice(b * self.batch_size, min((b + 1) * self.batch_size, self.num_samples))
        rows = order[s]
        x_buf, y_buf = self._buffers[b % len(self._buffers)]
        out = x_buf[:len(rows)]
        g = self.generator
        if g.geometric:
            # a gathered copy: the kernel's output must not alias its input
            source = np.take(self.x, rows, axis=0)
            transform_images(out, source, np.ascontiguousarray(transforms[s]), "bilinear", g.fill_mode,
                             g.cval, self._use_c)
        else:
            np.take(self.x, rows, axis=0, out=out)
        if g.channel_shift_range:
            low = out.min(axis=(1, 2, 3), keepdims=True)
            high = out.max(axis=(1, 2, 3), keepdims=True)
            np.clip(out + channel[s][:, None, None, None], low, high, out=out)
        if factors is not None:
            brightness_shift(out, factors[s])
        g.standardize(out)
        if y_buf is None:
            return out, None
        out_y = y_buf[:len(rows)]
        np.take(self.y, rows, axis=0, out=out_y)
        return out, out_y

    def __repr__(self):
        return (f"NumpyArrayIterator({self.num_samples} images {self.x.shape[1:]}, "
                f"batch_size={self.batch_size}, shuffle={self.shuffle})")


__all__ = ["ImageDataGenerator", "NumpyArrayIterator", "array_to_img", "brightness_shift",
           "img_to_array", "load_img", "save_img", "smart_resize", "transform_images"]
