"""The 3-D poolings, UpSampling3D, ZeroPadding3D, Cropping3D and SpatialDropout3D: values and
gradients against Keras 3.15.1 are in tests/test_conv1d.py (the shared table); here training,
save/load, configs, aliases and errors on every backend."""

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Sequential, load_model


def volume_model(dropout=0.2):
    minidl.set_seed(2)
    model = Sequential([
        layers.Input((4, 6, 6, 2)),
        layers.ZeroPadding3D(((1, 0), (1, 1), (0, 2))),
        layers.Conv3D(4, 3, padding="same", activation="relu"),
        layers.SpatialDropout3D(dropout),
        layers.Conv3D(4, (2, 1, 2), strides=(1, 2, 1), groups=2),
        layers.MaxPooling3D((2, 2, 2), padding="same"),
        layers.UpSampling3D((1, 2, 1)),
        layers.Conv3DTranspose(4, (1, 2, 2), strides=(1, 1, 1), padding="same"),
        layers.Cropping3D(((0, 1), (1, 1), (0, 1))),
        layers.AveragePooling3D((1, 2, 2), strides=1),
        layers.GlobalMaxPooling3D(keepdims=True),
        layers.GlobalAveragePooling3D(),
        layers.Dense(1),
    ])
    model.compile(optimizer=minidl.optimizers.Adam(0.02), loss="mse")
    return model


def volume_data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 4, 6, 6, 2)).astype(np.float32)
    return x, x[:, :2, :3].max(axis=(1, 2, 3, 4))[:, None]


def test_a_volume_model_trains_and_saves(active_backend, tmp_path):
    x, y = volume_data()
    model = volume_model()
    assert model.output_shape == (None, 1)
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, batch_size=8, epochs=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.5 * before
    path = tmp_path / "vol.minidl"
    model.save(path)
    loaded = load_model(path)
    assert loaded.layers[0].padding == ((1, 0), (1, 1), (0, 2))
    assert loaded.layers[3].strides == (1, 2, 1) and loaded.layers[3].groups == 2
    np.testing.assert_allclose(loaded.predict(x[:4], verbose=0), model.predict(x[:4], verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_a_volume_model_trains_like_numpy(active_backend):
    x, y = volume_data()
    model = volume_model(dropout=0.0)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    got = model.predict(x[:4], verbose=0)
    minidl.set_backend("numpy")
    reference = volume_model(dropout=0.0)
    reference.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(got, reference.predict(x[:4], verbose=0), rtol=2e-3, atol=2e-4)


def test_configs_aliases_and_names():
    assert layers.MaxPool3D is layers.MaxPooling3D and layers.AvgPool3D is layers.AveragePooling3D
    assert layers.GlobalAvgPool3D is layers.GlobalAveragePooling3D
    assert layers.GlobalMaxPool3D is layers.GlobalMaxPooling3D
    assert layers.Convolution3D is layers.Conv3D
    for layer in (layers.Conv3D(2, (1, 2, 3), padding="same", dilation_rate=2), layers.MaxPooling3D(),
                  layers.Conv3DTranspose(3, 2, strides=2, output_padding=(1, 0, 1)), layers.AveragePooling3D(2, strides=(1, 2, 1), padding="same"),
                  layers.GlobalAveragePooling3D(keepdims=True), layers.GlobalMaxPooling3D(),
                  layers.UpSampling3D((1, 2, 3)), layers.ZeroPadding3D(2), layers.Cropping3D((1, 0, 2)),
                  layers.SpatialDropout3D(0.5, seed=3)):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
    assert layers.MaxPooling3D().name.startswith("max_pooling3d")


@pytest.mark.parametrize("make, message", [
    (lambda: layers.MaxPooling3D((2, 2)), "pool_size"),
    (lambda: layers.AveragePooling3D(2, padding="causal"), "padding"),
    (lambda: layers.UpSampling3D(0), "size"),
    (lambda: layers.ZeroPadding3D(((1, 2), (1,), (0, 0))), "padding"),
    (lambda: layers.Cropping3D(-1), "cropping"),
    (lambda: layers.Conv3D(2, (3, 3)), "kernel_size"),
    (lambda: layers.Conv3D(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
    (lambda: layers.Conv3D(3, 3, groups=2), "groups"),
    (lambda: layers.Conv3D(2, 3, padding="causal"), "padding"),
    (lambda: layers.Conv3DTranspose(2, 3, strides=2, output_padding=2), "output_padding"),
    (lambda: layers.GlobalMaxPooling3D(data_format="channels_first"), "data_format"),
])
def test_bad_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_shapes_name_the_layer():
    with pytest.raises(ValueError, match="MaxPooling3D 'p'.*rank 5"):
        layers.MaxPooling3D(name="p")(layers.Input((4, 4, 3)))
    with pytest.raises(ValueError, match="pool_size"):
        layers.MaxPooling3D(3)(layers.Input((2, 4, 4, 3)))
    with pytest.raises(ValueError, match="Cropping3D.*leaves nothing"):
        layers.Cropping3D(((1, 1), (0, 0), (0, 0)))(layers.Input((2, 4, 4, 3)))
