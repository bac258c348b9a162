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


def _on_isa_and_generic(run):
    """run() on the selected ISA path and on the generic one."""
    fast = run()
    with isa_selected("generic"):
        return fast, run()


@pytest.mark.parametrize("kind, params", [("posterize", (1.0, 8.0)), ("solarize", (0.1, 0.5, 0.2, 0.9)),
                                          ("degenerate", (-0.8, 0.8))])
def test_color_kernels_equal_the_generic_loops(isa, kind, params):
    from minidl._cpu_kernels import ffi, lib
    from minidl.backends.contract.images import COLOR_KINDS
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.7, 1.7, (7, 9, 11, 3)).astype(np.float32)   # some values outside value_range
    x.reshape(-1)[::41] = np.nan
    p = ffi.new("float[4]", list(params) + [0.0] * (4 - len(params)))

    def run():
        out = np.empty_like(x)
        lib.minidl_random_color_forward(_ptr(ffi, out), _ptr(ffi, x), p, COLOR_KINDS[kind], -0.5, 1.5, 5, 7,
                                        99, 3)
        return out
    fast, generic = _on_isa_and_generic(run)
    np.testing.assert_array_equal(fast, generic)


@pytest.mark.parametrize("shape, low, high, bins", [((5, 13, 17, 3), 0.0, 255.0, 256), ((4, 9, 7, 2), -1.0, 1.0, 77)])
def test_equalize_equals_the_generic_loops(isa, shape, low, high, bins):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(4)
    x = rng.uniform(low - 0.1 * (high - low), high, shape).astype(np.float32)
    x.reshape(-1)[::29] = np.nan

    def run():
        out = np.empty_like(x)
        assert lib.minidl_equalize_forward(_ptr(ffi, out), _ptr(ffi, x), low, high, bins,
                                           int(np.prod(shape[:3])), shape[3]) == 0
        return out
    fast, generic = _on_isa_and_generic(run)
    np.testing.assert_array_equal(fast, generic)


@pytest.mark.parametrize("w, kh, kw", [(23, 3, 5), (4, 3, 3), (40, 9, 9)])   # blocks; tap by tap (a
def test_filter_blend_equals_the_generic_loops(isa, w, kh, kw):              # narrow row, > 64 taps)
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(5)
    n, h, c = 6, 11, 3
    x = rng.uniform(-10, 265, (n, h, w, c)).astype(np.float32)
    x[3, 2, 1, 1] = np.nan
    kernel = rng.uniform(0, 1, (kh, kw)).astype(np.float32)
    weights = np.array([0.0, 0.3, 1.0, 1.7, -0.4, 0.5], np.float32)

    def run():
        out = np.empty_like(x)
        lib.minidl_image_filter_blend_forward(_ptr(ffi, out), _ptr(ffi, x), _ptr(ffi, kernel), _ptr(ffi, weights),
                                              0.0, 255.0, n, h, w, c, kh, kw)
        return out
    fast, generic = _on_isa_and_generic(run)
    np.testing.assert_array_equal(fast, generic)


@pytest.mark.parametrize("c", [1, 3, 5])
def test_auto_contrast_equals_the_generic_loops(isa, c):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(6)
    x = rng.uniform(-20, 280, (5, 7, 9, c)).astype(np.float32)
    x[1] = 17.0                                # a constant image: kept as it is
    x[2, ..., 0] = np.nan

    def run():
        out = np.empty_like(x)
        lib.minidl_auto_contrast_forward(_ptr(ffi, out), _ptr(ffi, x), 0.0, 255.0, 5, 63, c)
        return out
    fast, generic = _on_isa_and_generic(run)
    np.testing.assert_array_equal(fast, generic)


@pytest.mark.parametrize("c", [1, 3, 5])
def test_random_contrast_equals_the_generic_loops(isa, c):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(8)
    x = rng.uniform(-20, 280, (5, 7, 9, c)).astype(np.float32)

    def run():
        out = np.empty_like(x)
        lib.minidl_random_contrast_forward(_ptr(ffi, out), _ptr(ffi, x), 0.4, 0.7, 0.0, 255.0, 21, 5, 63, c)
        return out
    fast, generic = _on_isa_and_generic(run)
    np.testing.assert_array_equal(fast, generic)
