"""The cpu kernels behind the augmentation layers (AugMix's ops) on each ISA path against the
generic build's scalar code, their reference: bitwise equal (the vector paths do the same
float32 operations in the same order). Run once per ISA path this CPU has (conftest's `isa`)."""

import numpy as np
import pytest

from conftest import isa_selected

FILL_MODES = ("constant", "nearest", "wrap", "reflect")


def _ptr(ffi, a, kind="float *"):
    return ffi.cast(kind, a.ctypes.data)


def _transforms(rng, n, h, w, projective):
    """Affine transforms about the centre (rotation, shear, scale, shift up to 1.5 images, so that
    taps fall one and two periods out), some projective, one with a NaN."""
    t = np.zeros((n, 8), np.float32)
    angle = rng.uniform(-np.pi, np.pi, n)
    scale = rng.uniform(0.5, 1.6, n)
    shear = rng.uniform(-0.4, 0.4, n)
    t[:, 0] = scale * np.cos(angle)
    t[:, 1] = -scale * np.sin(angle) + shear
    t[:, 3] = scale * np.sin(angle)
    t[:, 4] = scale * np.cos(angle)
    t[:, 2] = rng.uniform(-1.5, 1.5, n) * w + w / 2 - t[:, 0] * w / 2 - t[:, 1] * h / 2
    t[:, 5] = rng.uniform(-1.5, 1.5, n) * h + h / 2 - t[:, 3] * w / 2 - t[:, 4] * h / 2
    if projective:
        t[::2, 6:] = rng.uniform(-0.02, 0.02, (len(t[::2]), 2))
    t[-1, 2] = np.nan
    return t


def _transform_forward(x, t, interpolation, fill_mode, oh, ow):
    from minidl._cpu_kernels import ffi, lib
    n, h, w, c = x.shape
    out = np.full((n, oh, ow, c), -7.0, np.float32)
    status = lib.minidl_image_transform_forward(_ptr(ffi, out), _ptr(ffi, x), _ptr(ffi, t), interpolation,
                                                FILL_MODES.index(fill_mode), 3.5, n, h, w, c, oh, ow, len(t))
    assert status == 0
    return out


@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("interpolation", [0, 1])
@pytest.mark.parametrize("c, oh, ow, projective, shared", [
    (3, 32, 32, False, False), (1, 9, 13, True, False), (5, 7, 11, False, True), (3, 6, 21, True, False)])
def test_image_transform_forward_equals_the_scalar_rows(isa, fill_mode, interpolation, c, oh, ow,
                                                         projective, shared):
    rng = np.random.default_rng(7)
    n, h, w = 6, 8 + c, 10 + c
    x = np.floor(rng.uniform(0, 256, (n, h, w, c))).astype(np.float32)
    t = _transforms(rng, n, h, w, projective)
    if shared:
        t = t[:1].copy()
    fast = _transform_forward(x, t, interpolation, fill_mode, oh, ow)
    with isa_selected("generic"):
        reference = _transform_forward(x, t, interpolation, fill_mode, oh, ow)
    assert not (fast == -7.0).any()       # every element written
    np.testing.assert_array_equal(fast, reference)
