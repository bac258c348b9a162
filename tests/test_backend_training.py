"""Every fast backend trains like the numpy reference: same start, same steps, same weights."""

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers
from minidl.models import Model

FAST_BACKENDS = [name for name in ("cpu", "opencl") if name in minidl.available_backends()]


def build_model(dropout=0.0):
    # Dropout masks come from each backend's own generator, so cross-backend comparisons
    # run with rate 0 (an identity); the masks themselves are tested op by op.
    inp = layers.Input((12, 12, 3))
    h = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    h = layers.BatchNormalization()(h)
    r = layers.Conv2D(8, 3, padding="same")(h)
    h = layers.Add()([h, r])
    h = layers.MaxPooling2D(2)(h)
    h = layers.Conv2D(6, 3, strides=2, padding="valid", activation="tanh")(h)
    h = layers.AveragePooling2D(2, padding="same")(h)
    h = layers.Flatten()(h)
    h = layers.Dense(16, activation="relu")(h)
    h = layers.Dropout(dropout)(h)
    return Model(inp, layers.Dense(5, activation="softmax")(h))


def train(backend_name, initial, x, y, optimizer):
    minidl.set_backend(backend_name)
    minidl.set_seed(7)  # the model seed fixes the shuffling order
    model = build_model()
    model.set_weights(initial)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=True, verbose=0)
    return model.get_weights(), history.history


@pytest.mark.parametrize("backend", FAST_BACKENDS)
@pytest.mark.parametrize("make_optimizer", [lambda: optimizers.SGD(0.05, momentum=0.9, nesterov=True),
                                            lambda: optimizers.Adam(0.003)])
def test_training_matches_numpy(backend, make_optimizer):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 12, 12, 3)).astype(np.float32)
    y = rng.integers(0, 5, size=40)
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    initial = build_model().get_weights()
    try:
        ref_w, ref_h = train("numpy", initial, x, y, make_optimizer())
        got_w, got_h = train(backend, initial, x, y, make_optimizer())
    finally:
        minidl.set_backend("numpy")
    for a, b in zip(ref_w, got_w):
        np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(got_h["loss"], ref_h["loss"], rtol=1e-3)
