"""Call keyword arguments belong to one call (its node or eager context), not to the layer:
one attention layer called with and without use_causal_mask in one model, a custom layer
whose call takes its own keyword arguments, and both kept by model files."""

import numpy as np
import pytest

import minidl
from minidl import layers, ops


def _mha_model(shared):
    x = layers.Input((5, 4))
    first = layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
    second = first if shared else layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha2")
    causal = first(x, x, use_causal_mask=True)
    full = second(x, x)
    return minidl.Model(x, layers.Concatenate()([causal, full]))


def test_one_attention_layer_causal_in_one_call_only(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    shared = _mha_model(True)
    twin = _mha_model(False)
    twin.get_layer("mha").set_weights(shared.get_layer("mha").get_weights())
    twin.get_layer("mha2").set_weights(shared.get_layer("mha").get_weights())
    got, want = shared.predict(x, verbose=0), twin.predict(x, verbose=0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the two halves differ: the first query attends only itself under the causal mask
    assert not np.allclose(got[..., :4], got[..., 4:], atol=1e-4)
    # and training sums the two calls' gradients into the one set of weights
    y = rng.standard_normal((3, 5, 8)).astype(np.float32)
    for m in (shared, twin):
        m.compile(minidl.optimizers.SGD(0.1), "mse")
    before = shared.get_layer("mha").get_weights()
    shared.train_on_batch(x, y)
    twin.train_on_batch(x, y)
    for w0, w_shared, w1, w2 in zip(before, shared.get_layer("mha").get_weights(),
                                    twin.get_layer("mha").get_weights(),
                                    twin.get_layer("mha2").get_weights()):
        np.testing.assert_allclose(w_shared - w0, (w1 - w0) + (w2 - w0), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("suffix", [".minidl", ".keras"])
def test_model_files_keep_each_calls_options(backend, tmp_path, suffix):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    model = _mha_model(True)
    path = str(tmp_path / ("m" + suffix))
    model.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


class Scaled(layers.Layer):
    """A custom layer whose call takes its own keyword argument, as Keras passes it."""

    def call(self, inputs, factor=1.0, training=None):
        return inputs * factor


def test_custom_layer_call_keyword_arguments_per_call(backend):
    x = layers.Input((3,))
    scaled = Scaled()
    model = minidl.Model(x, layers.Concatenate()([scaled(x, factor=2.0), scaled(x, factor=-3.0),
                                                  scaled(x)]))
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(model.predict(data, verbose=0),
                               np.concatenate([2 * data, -3 * data, data], axis=1))
    # eager calls: arrays and Tensors
    np.testing.assert_allclose(scaled(data, factor=0.5), 0.5 * data)
    np.testing.assert_allclose(ops.convert_to_numpy(scaled(ops.convert_to_tensor(data), factor=4.0)),
                               4 * data)


def test_call_keyword_arguments_are_checked():
    x = layers.Input((3,))
    with pytest.raises(TypeError, match="unexpected call argument 'scale'.*factor"):
        Scaled()(x, scale=2.0)
    with pytest.raises(TypeError, match="'factor' must be a plain value"):
        Scaled()(x, factor=[1.0, 2.0])
    with pytest.raises(TypeError, match="must be called on the output of Input.. or another layer, got ndarray"):
        Scaled()(x, factor=np.ones(3))   # a tensor argument beside symbolic inputs
    with pytest.raises(TypeError, match="dense.*unexpected call argument 'use_causal_mask'"):
        layers.Dense(2, name="dense")(x, use_causal_mask=True)
