"""preprocessing.image.smart_resize against Keras 3.15.1's outputs
(tests/data/make_keras_smart_resize.py), on every backend."""

import os

import numpy as np
import pytest

import minidl
from minidl import ops
from minidl.preprocessing.image import smart_resize

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_smart_resize.npz"))
CASES = [((8, 8), "bilinear", "channels_last"), ((6, 5), "nearest", "channels_last"),
         ((5, 9), "bilinear", "channels_first")]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_smart_resize_matches_keras(backend, index):
    size, interpolation, data_format = CASES[index]
    x = KERAS[f"x{index}"]
    got = smart_resize(x, size, interpolation=interpolation, data_format=data_format)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, KERAS[f"y{index}"], rtol=1e-5, atol=1e-3)
    # a tensor in, a tensor out
    tensor = smart_resize(ops.convert_to_tensor(x), size, interpolation=interpolation,
                          data_format=data_format)
    assert ops.is_tensor(tensor)
    np.testing.assert_allclose(ops.convert_to_numpy(tensor), KERAS[f"y{index}"], rtol=1e-5, atol=1e-3)


def test_smart_resize_errors():
    with pytest.raises(ValueError, match="tuple of 2 integers"):
        smart_resize(np.zeros((4, 4, 1)), (2, 2, 2))
    with pytest.raises(ValueError, match="incorrect rank"):
        smart_resize(np.zeros((4, 4)), (2, 2))
    with pytest.raises(TypeError, match="unexpected keyword"):
        smart_resize(np.zeros((4, 4, 1)), (2, 2), method="area")
    assert minidl.preprocessing.image.smart_resize is smart_resize
