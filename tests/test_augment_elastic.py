"""Keras 3's RandomElasticTransform (minidl/layers/augment_elastic.py) and its backend ops
image_displace_forward / _backward: the resampling against real Keras 3.15.1's map_coordinates
for a given field, the whole transform against Keras's elastic_transform for given noise
(keras_reference/augment_elastic_reference.npz), on every backend; the same draws on every
backend; training / inference; the gradient as the exact adjoint; the cpu kernels against their
reference twins; errors and the config round trip."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.backends import get_backend
from minidl.layers.augment_elastic import elastic_params
from minidl.layers.calls import LayerCall

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference"))
from make_augment_elastic_reference import ELASTIC, FILL_VALUE, RESAMPLE  # noqa: E402
from layer_runs import LayerRun  # noqa: E402

BACKENDS = minidl.available_backends()
REFERENCE = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference",
                                 "augment_elastic_reference.npz"))


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """The test runs once with each usable backend active (numpy again afterwards)."""
    request.addfinalizer(lambda: minidl.set_backend("numpy"))
    minidl.set_backend(request.param)
    return request.param


def images(n=3, h=12, w=10, c=3, seed=0):
    return np.floor(np.random.default_rng(seed).uniform(0, 256, (n, h, w, c))).astype(np.float32)


def displace(b, x, field, interpolation, fill_mode, fill_value=0.0, clip=(-np.inf, np.inf)):
    out = b.zeros(x.shape)
    b.image_displace_forward(out, b.from_numpy(x), b.from_numpy(field), interpolation, fill_mode,
                             fill_value, clip)
    return b.to_numpy(out)


@pytest.mark.parametrize("interpolation,fill_mode", RESAMPLE)
def test_resampling_matches_keras_map_coordinates(active_backend, interpolation, fill_mode):
    b = get_backend()
    got = displace(b, REFERENCE["x"], REFERENCE["field"], interpolation, fill_mode, FILL_VALUE)
    np.testing.assert_allclose(got, REFERENCE[f"map_{interpolation}_{fill_mode}"], rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("case", sorted(ELASTIC))
def test_transform_matches_keras_elastic_transform_for_given_noise(active_backend, case):
    """The layer's field (its Gaussian blur on the backend) and resampling, fed the noise Keras
    was made to draw, give Keras's elastic_transform."""
    factor, interpolation, fill_mode = ELASTIC[case]
    big = REFERENCE["big"]
    layer = layers.RandomElasticTransform(interpolation=interpolation, fill_mode=fill_mode,
                                          fill_value=FILL_VALUE, value_range=(-1e9, 1e9))
    b = get_backend()
    layer.build_once(tuple(big.shape[1:]))
    layer.attach(b)
    alpha, sigma, _ = elastic_params(big.shape[1], big.shape[2], factor)
    noise = REFERENCE[f"{case}_noise"] * np.float32(alpha * sigma)
    field = layer.displacement(LayerCall(layer, b), noise, sigma)
    got = displace(b, big, b.to_numpy(field), interpolation, fill_mode, FILL_VALUE)
    # float32 blurs in another order (Keras: one 2-D window; minidl: rows then columns)
    np.testing.assert_allclose(got, REFERENCE[case], rtol=1e-4, atol=2e-2)
