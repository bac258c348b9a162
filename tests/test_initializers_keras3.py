"""keras.initializers by class and by name: values, statistics, seeds, configs and errors as
Keras 3.15.1 gives them (configs and messages checked in a venv with real Keras; the random
draws cannot match another framework's generator, so their distributions are checked)."""

import math

import numpy as np
import pytest

import minidl
from minidl import initializers as I

# get_config() of each class with its defaults, as real Keras 3.15.1 prints them
KERAS_CONFIGS = {
    "Constant": {"value": 0.0}, "Zeros": {}, "Ones": {},
    "Orthogonal": {"seed": None, "gain": 1.0},
    "RandomNormal": {"seed": None, "mean": 0.0, "stddev": 0.05},
    "RandomUniform": {"seed": None, "minval": -0.05, "maxval": 0.05},
    "TruncatedNormal": {"seed": None, "mean": 0.0, "stddev": 0.05},
    "VarianceScaling": {"seed": None, "scale": 1.0, "mode": "fan_in", "distribution": "truncated_normal",
                        "input_axes": None, "output_axes": None},
    **{name: {"seed": None, "input_axes": None, "output_axes": None}
       for name in ("GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "LecunNormal", "LecunUniform")},
}


@pytest.mark.parametrize("name", sorted(KERAS_CONFIGS))
def test_default_configs_and_serialize_as_keras(name):
    initializer = getattr(I, name)()
    assert initializer.get_config() == KERAS_CONFIGS[name]
    config = I.serialize(initializer)
    assert config == {"module": "keras.initializers", "class_name": name, "config": KERAS_CONFIGS[name],
                      "registered_name": None}
    again = I.deserialize(config)
    assert type(again) is type(initializer) and again.get_config() == initializer.get_config()


@pytest.mark.parametrize("snake, cls", [
    ("glorot_uniform", "GlorotUniform"), ("glorot_normal", "GlorotNormal"), ("he_uniform", "HeUniform"),
    ("he_normal", "HeNormal"), ("lecun_uniform", "LecunUniform"), ("lecun_normal", "LecunNormal"),
    ("random_normal", "RandomNormal"), ("random_uniform", "RandomUniform"), ("truncated_normal", "TruncatedNormal"),
    ("variance_scaling", "VarianceScaling"), ("orthogonal", "Orthogonal"), ("identity", "Identity"),
    ("constant", "Constant"), ("zeros", "Zeros"), ("ones", "Ones")])
def test_lower_case_names_are_the_classes(snake, cls):
    # Keras: initializers.glorot_uniform is GlorotUniform; get() takes either spelling
    assert getattr(I, snake) is getattr(I, cls)
    assert type(I.get(snake)) is getattr(I, cls)
    assert type(I.get(cls)) is getattr(I, cls)
    assert I.IdentityInitializer is I.Identity and I.OrthogonalInitializer is I.Orthogonal


def test_deterministic_values():
    np.testing.assert_array_equal(I.Identity(gain=2.0)((2, 3)), [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    np.testing.assert_array_equal(I.Constant(0.5)((2, 2)), np.full((2, 2), 0.5))
    np.testing.assert_array_equal(I.Constant([1.0, 2.0])((2, 2)), [[1.0, 2.0], [1.0, 2.0]])
    assert I.deserialize({"class_name": "Constant", "config": {"value": 2.0}})((1,)).tolist() == [2.0]
    assert I.Zeros()((2,), dtype="float32").dtype == np.float32


@pytest.mark.parametrize("cls, mode, scale, uniform", [
    ("GlorotUniform", "fan_avg", 1.0, True), ("GlorotNormal", "fan_avg", 1.0, False),
    ("HeUniform", "fan_in", 2.0, True), ("HeNormal", "fan_in", 2.0, False),
    ("LecunUniform", "fan_in", 1.0, True), ("LecunNormal", "fan_in", 1.0, False)])
def test_variance_scaling_family_statistics(cls, mode, scale, uniform):
    shape = (3, 3, 40, 60)                       # a conv kernel: fans multiply by 3 * 3
    fan_in, fan_out = 9 * 40, 9 * 60
    n = {"fan_in": fan_in, "fan_avg": (fan_in + fan_out) / 2}[mode]
    values = getattr(I, cls)(seed=7)(shape)
    assert values.shape == shape
    np.testing.assert_allclose(values.std(), math.sqrt(scale / n), rtol=0.03)
    bound = math.sqrt(3 * scale / n) if uniform else 2 * math.sqrt(scale / n) / 0.87962566103423978
    assert np.abs(values).max() <= bound
    # an integer seed gives the same values at every call, as Keras's integer seeds
    np.testing.assert_array_equal(values, getattr(I, cls)(seed=7)(shape))


def test_fans_as_keras():
    assert I.compute_fans((5,)) == (5, 5)
    assert I.compute_fans((4, 6)) == (4, 6)
    assert I.compute_fans((3, 8, 16)) == (24, 48)           # a Conv1D kernel
    assert I.compute_fans((2, 3, 3, 4, 5)) == (72, 90)      # a Conv3D kernel
    assert I.compute_fans((4, 6, 8), input_axes=[0], output_axes=[1, 2]) == (4, 48)
    # Keras 3.15.1: VarianceScaling(2.0, "fan_out", "untruncated_normal") of (50, 40, 30) has std 0.0365
    values = I.VarianceScaling(2.0, "fan_out", "untruncated_normal", seed=3)((50, 40, 30))
    np.testing.assert_allclose(values.std(), math.sqrt(2 / 1500), rtol=0.02)


def test_random_normal_uniform_truncated():
    values = I.RandomNormal(mean=1.0, stddev=0.5, seed=1)((200, 100))
    np.testing.assert_allclose([values.mean(), values.std()], [1.0, 0.5], rtol=0.02)
    values = I.RandomUniform(minval=2.0, maxval=3.0, seed=1)((200, 100))
    assert values.min() >= 2.0 and values.max() <= 3.0
    values = I.TruncatedNormal(mean=-1.0, stddev=0.1, seed=1)((200, 100))
    assert np.abs(values + 1.0).max() <= 0.2 and abs(values.mean() + 1.0) < 0.005
    minidl.set_seed(3)
    first = I.RandomNormal()((4,))
    minidl.set_seed(3)
    np.testing.assert_array_equal(first, I.RandomNormal()((4,)))      # seed=None follows set_seed


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 5)])
def test_orthogonal(shape):
    values = I.Orthogonal(gain=1.5, seed=2)(shape)
    assert values.shape == shape
    flat = values.reshape(-1, shape[-1])
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, 2.25 * np.eye(len(gram)), atol=1e-10)


@pytest.mark.parametrize("call, error, message", [
    (lambda: I.Identity()((2, 2, 2)), ValueError, "Identity matrix initializer can only be used for 2D matrices"),
    (lambda: I.Orthogonal()((3,)), ValueError, "at least two-dimensional"),
    (lambda: I.VarianceScaling(scale=-1), ValueError, "Argument `scale` must be positive float"),
    (lambda: I.VarianceScaling(mode="x"), ValueError, "Invalid `mode` argument"),
    (lambda: I.VarianceScaling(distribution="x"), ValueError, "Invalid `distribution` argument"),
    (lambda: I.RandomNormal(seed="a"), ValueError, "`seed` argument should be"),
    (lambda: I.get("no_such_initializer"), ValueError, "Could not interpret initializer identifier"),
])
def test_errors_as_keras(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_layers_take_instances_and_names(active_backend):
    model = minidl.Sequential([minidl.layers.Input((3,)),
                               minidl.layers.Dense(3, kernel_initializer=I.Identity(gain=3.0),
                                                   bias_initializer=I.Constant(0.25)),
                               minidl.layers.Dense(2, kernel_initializer="lecun_normal")])
    kernel, bias = model.layers[0].get_weights()
    np.testing.assert_allclose(kernel, 3.0 * np.eye(3))
    np.testing.assert_allclose(bias, 0.25)
