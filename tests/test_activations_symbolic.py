"""keras.activations functions on a functional model's symbolic tensors (an op node each, as
Keras 3's: `keras.activations.sigmoid(logits) * 5` in keras-io's memory-efficient embeddings),
saved and loaded in both file formats."""

import numpy as np
import pytest

import minidl as keras
from minidl.models import load_model

from test_keras_compat import active_backend  # noqa: F401  (the every-backend fixture)


@pytest.mark.parametrize("extension", ["keras", "minidl"])
def test_activation_function_on_symbolic_tensor(active_backend, tmp_path, extension):
    x = keras.Input((3,))
    out = keras.activations.sigmoid(x) * 5 + keras.activations.relu(x, max_value=1.0)
    model = keras.Model(x, out)
    assert out.shape == (None, 3)
    data = np.array([[-2.0, 0.0, 3.0]], "float32")
    expected = 5 / (1 + np.exp(-data)) + np.clip(data, 0, 1)
    np.testing.assert_allclose(model.predict(data, verbose=0), expected, rtol=1e-5)
    path = tmp_path / f"act.{extension}"
    model.save(path)
    np.testing.assert_allclose(load_model(path).predict(data, verbose=0), expected, rtol=1e-5)
    assert keras.activations.get("sigmoid") is keras.activations.sigmoid
