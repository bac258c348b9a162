"""The layers the new applications brought, on every backend against NumPy: ConvNeXt's
LayerScale and StochasticDepth, InceptionResNetV2's CustomScaleLayer and
GlobalAveragePooling2D(keepdims=True) (MobileNet's and MobileNetV3's heads)."""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.applications.convnext import LayerScale, StochasticDepth
from minidl.applications.inception_resnet_v2 import CustomScaleLayer
from minidl.models import Model

from layer_runs import LayerRun


def built(layer, *shapes):
    inputs = [layers.Input(shape) for shape in shapes]
    Model(inputs, layer(inputs if len(inputs) > 1 else inputs[0]))
    return layer


def host(x):
    return minidl.get_backend().to_numpy(x)


def dev(x):
    return minidl.get_backend().from_numpy(np.ascontiguousarray(x, np.float32))


def test_layer_scale_forward_and_gradients(active_backend):
    rng = np.random.default_rng(0)
    layer = built(LayerScale(1e-6, 4, name="scale"), (3, 5, 4))
    gamma = rng.normal(size=4).astype(np.float32)
    layer.set_weights([gamma])
    x = rng.normal(size=(2, 3, 5, 4)).astype(np.float32)
    dout = rng.normal(size=x.shape).astype(np.float32)
    run = LayerRun(layer)
    np.testing.assert_allclose(host(run.forward(dev(x), True)), x * gamma, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(run.backward(dev(dout))), dout * gamma, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(layer.gamma.grad), (dout * x).sum(axis=(0, 1, 2)),
                               rtol=1e-4, atol=1e-5)


def test_layer_scale_starts_at_init_values_and_checks_channels():
    minidl.set_backend("numpy")
    layer = built(LayerScale(0.25, 3), (2, 3))
    np.testing.assert_array_equal(layer.get_weights()[0], [0.25, 0.25, 0.25])
    assert layer.get_config()["projection_dim"] == 3 and layer.get_config()["init_values"] == 0.25
    with pytest.raises(ValueError, match="projection_dim=4 channels"):
        built(LayerScale(0.1, 4), (2, 3))


def test_custom_scale_layer_forward_and_gradients(active_backend):
    rng = np.random.default_rng(1)
    layer = built(CustomScaleLayer(0.17), (4, 4, 3), (4, 4, 3))
    a, b = (rng.normal(size=(2, 4, 4, 3)).astype(np.float32) for _ in range(2))
    dout = rng.normal(size=a.shape).astype(np.float32)
    run = LayerRun(layer)
    np.testing.assert_allclose(host(run.forward([dev(a), dev(b)], True)), a + 0.17 * b, rtol=1e-5,
                               atol=1e-6)
    da, db = run.backward(dev(dout))
    np.testing.assert_allclose(host(da), dout, rtol=1e-6)
    np.testing.assert_allclose(host(db), 0.17 * dout, rtol=1e-5, atol=1e-7)
    assert layer.get_config()["scale"] == pytest.approx(0.17)


def test_global_average_pooling_keepdims(active_backend):
    rng = np.random.default_rng(2)
    layer = built(layers.GlobalAveragePooling2D(keepdims=True), (3, 5, 4))
    assert layer.output_shape == (1, 1, 4) and layer.get_config()["keepdims"] is True
    x = rng.normal(size=(2, 3, 5, 4)).astype(np.float32)
    dout = rng.normal(size=(2, 1, 1, 4)).astype(np.float32)
    run = LayerRun(layer)
    np.testing.assert_allclose(host(run.forward(dev(x), True)), x.mean(axis=(1, 2), keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(run.backward(dev(dout))), np.broadcast_to(dout / 15, x.shape),
                               rtol=1e-5, atol=1e-7)
    assert layers.GlobalAveragePooling2D("channels_last", True).keepdims    # Keras's order
    with pytest.raises(ValueError, match="data_format must be 'channels_last'"):
        layers.GlobalAveragePooling2D("channels_first")


def test_stochastic_depth_drops_whole_samples(active_backend):
    layer = built(StochasticDepth(0.5), (4, 4, 8))
    x = np.ones((64, 4, 4, 8), np.float32)
    run = LayerRun(layer)
    np.testing.assert_array_equal(host(run.forward(dev(x), False)), x)     # inference: identity
    y = host(run.forward(dev(x), True))
    per_sample = y.reshape(64, -1)
    # each sample is all dropped (0) or all kept (1 / (1 - 0.5)), and both happen
    assert set(np.unique(per_sample)) <= {0.0, 2.0}
    assert np.all(per_sample.min(axis=1) == per_sample.max(axis=1))
    assert 0 < (per_sample[:, 0] == 0).sum() < 64
    dx = host(run.backward(dev(np.ones_like(x))))
    np.testing.assert_array_equal(dx, y)
    assert layer.get_config()["drop_path_rate"] == 0.5


def test_convnext_with_stochastic_depth_trains(active_backend):
    """ConvNeXt's builder with drop_path_rate > 0 (Keras's variants use 0): StochasticDepth
    on the residual paths, a few steps of training."""
    from minidl.applications.convnext import ConvNeXt
    model = ConvNeXt((1, 1, 1, 1), (8, 8, 16, 16), drop_path_rate=0.2, weights=None,
                     input_shape=(32, 32, 3), classes=3, name="convnext_mini")
    names = [layer.name for layer in model.layers]
    assert "convnext_mini_stage_3_block_0_stochastic_depth" in names
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (8, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    losses = model.fit(x, y, batch_size=8, epochs=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_mobilenet_v3_small_trains(active_backend):
    """Hard swish, the hard-sigmoid gate and the convolution head learn on every backend."""
    from minidl import applications
    model = applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3), alpha=0.75,
                                          classes=3, dropout_rate=0.0)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (8, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    losses = model.fit(x, y, batch_size=8, epochs=4, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
