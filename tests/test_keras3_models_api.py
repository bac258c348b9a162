"""keras.models / keras.saving's object API on minidl: clone_model, to_json /
model_from_json, save_model, serialize_keras_object / deserialize_keras_object,
layers.serialize / deserialize, the custom-object registry, and a get_config / from_config
round trip of every class minidl has. Formats and messages as Keras 3.15.1 gives them."""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import (constraints, initializers, layers, losses, metrics, models,
                    optimizers, regularizers, saving, schedules, utils)


@saving.register_keras_serializable(package="models_api")
def double_it(x):
    return x * 2.0


@saving.register_keras_serializable(package="models_api")
class Scale(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return dict(super().get_config(), factor=self.factor)


# ------------------------------------------------------- serialize / deserialize
def test_serialize_keras_object_writes_keras_3_s_dicts():
    d = layers.Dense(3, name="d")
    config = saving.serialize_keras_object(d)
    assert (config["module"], config["class_name"], config["registered_name"]) == \
        ("keras.layers", "Dense", None)
    assert config["config"]["units"] == 3 and "build_config" not in config
    d.build_once((2,))
    assert saving.serialize_keras_object(d)["build_config"] == {"input_shape": (None, 2)}
    assert saving.serialize_keras_object(optimizers.Adam())["module"] == "keras.optimizers"
    assert saving.serialize_keras_object(losses.MeanSquaredError())["module"] == "keras.losses"
    assert saving.serialize_keras_object(regularizers.L2(0.1)) == {
        "module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.1},
        "registered_name": None}
    for plain in (None, 3, "relu", [1, "a"], (1, 2), {"a": 1}):
        assert saving.serialize_keras_object(plain) == plain
    assert saving.serialize_keras_object(np.ones(2)) == {
        "class_name": "__numpy__", "config": {"value": [1.0, 1.0], "dtype": "float64"}}
    assert saving.serialize_keras_object(double_it) == {
        "module": "builtins", "class_name": "function", "config": "models_api>double_it",
        "registered_name": "function"}
    custom = saving.serialize_keras_object(Scale(4.0, name="m"))
    assert custom["class_name"] == "Scale" and custom["registered_name"] == "models_api>Scale"


def test_deserialize_keras_object():
    layer = saving.deserialize_keras_object(saving.serialize_keras_object(Scale(4.0, name="m")))
    assert isinstance(layer, Scale) and layer.factor == 4.0
    dense = saving.deserialize_keras_object({"class_name": "Dense", "config": {"units": 2},
                                             "module": "keras.layers"})
    assert isinstance(dense, layers.Dense) and dense.units == 2
    assert saving.deserialize_keras_object("relu") == "relu"
    assert saving.deserialize_keras_object(saving.serialize_keras_object(double_it)) is double_it
    np.testing.assert_array_equal(
        saving.deserialize_keras_object(saving.serialize_keras_object(np.arange(3.0))), [0, 1, 2])
    built = saving.deserialize_keras_object(saving.serialize_keras_object(layers.Dense(2)(
        minidl.Input((5,))).layer))
    assert built.built and built.input_shape == (5,)
    with pytest.raises(TypeError, match="Could not locate class 'Nope'"):
        saving.deserialize_keras_object({"class_name": "Nope", "config": {}})
    assert utils.deserialize_keras_object is saving.deserialize_keras_object
    assert utils.serialize_keras_object is saving.serialize_keras_object


def test_layers_serialize_and_deserialize():
    config = layers.serialize(layers.Conv2D(4, 3, name="c"))
    assert config["class_name"] == "Conv2D" and config["module"] == "keras.layers"
    conv = layers.deserialize(config)
    assert isinstance(conv, layers.Conv2D) and conv.get_config() == config["config"]
    assert isinstance(layers.deserialize("Dense", {"units": 2}), layers.Dense)   # minidl's form
    scale = layers.deserialize({"class_name": "Scale", "config": {"factor": 3.0}},
                               {"Scale": Scale})
    assert scale.factor == 3.0


def test_custom_object_registry():
    assert saving.get_custom_objects()["models_api>Scale"] is Scale
    assert saving.get_registered_name(Scale) == "models_api>Scale"
    assert saving.get_registered_name(Scale()) == "models_api>Scale"
    assert saving.get_registered_name(layers.Dense) == "Dense"
    assert saving.get_registered_object("models_api>double_it") is double_it

    class Local(layers.Layer):
        def call(self, x):
            return x

    assert saving.get_registered_object("Local") is None
    with saving.custom_object_scope({"Local": Local}):
        assert saving.get_registered_object("Local") is Local
        assert layers.deserialize({"class_name": "Local", "config": {}}).__class__ is Local
    with utils.CustomObjectScope({"Local": Local}):
        assert utils.get_registered_object("Local") is Local
    assert saving.get_registered_object("Local", custom_objects={"Local": Local}) is Local


# ------------------------------------------------------------ every class
def _instances():
    yield layers.InputLayer(shape=(3,))
    required = {"Dense": (4,), "Conv2D": (4, 3), "Activation": ("relu",), "Dropout": (0.5,),
                "Reshape": ((2, 2),), "Lambda": (double_it,), "RepeatVector": (3,),
                "GaussianNoise": (0.1,), "SpatialDropout2D": (0.2,), "Permute": ((2, 1),),
                "CenterCrop": (4, 4), "Rescaling": (0.5,), "Resizing": (4, 4),
                "RandomBrightness": (0.2,), "RandomContrast": (0.2,), "RandomCrop": (4, 4),
                "RandomRotation": (0.1,), "RandomTranslation": (0.1, 0.1), "RandomZoom": (0.1,),
                "RandomColorDegeneration": (0.2,), "RandomPosterization": (4,),
                "RandomSaturation": (0.2,), "RandomHue": (0.2,),
                "RandomSharpness": (0.3,), "Pipeline": ([layers.RandomFlip(), layers.MixUp(0.3)],),
                "DepthwiseConv2D": (3,), "SeparableConv2D": (4, 3), "Conv2DTranspose": (4, 3),
                "SimpleRNN": (4,), "LSTM": (4,), "GRU": (4,),
                "Bidirectional": (layers.LSTM(4),), "TimeDistributed": (layers.Dense(2),),
                "StackedRNN": ([layers.LSTMCell(4), layers.GRUCell(3)],),
                "MultiHeadAttention": (2, 4), "GroupQueryAttention": (4, 4, 2),
                "EinsumDense": ("ab,bc->ac", 4), "Dot": (1,),
                "Conv1D": (4, 3), "Conv1DTranspose": (4, 3), "DepthwiseConv1D": (3,),
                "SeparableConv1D": (4, 3), "AveragePooling1D": (2,), "Embedding": (10, 3),
                "SpatialDropout1D": (0.2,), "Conv3D": (4, 3), "Conv3DTranspose": (4, 3),
                "AveragePooling3D": (2,), "SpatialDropout3D": (0.2,), "AdaptiveAveragePooling1D": (2,),
                "AdaptiveMaxPooling1D": (2,), "AdaptiveAveragePooling2D": (2,), "AdaptiveMaxPooling2D": (2,),
                "AdaptiveAveragePooling3D": (2,), "AdaptiveMaxPooling3D": (2,),
                "CategoryEncoding": (4,), "Discretization": ([0.0, 1.0],), "Hashing": (4,),
                "HashedCrossing": (4,), "AlphaDropout": (0.2,), "GaussianDropout": (0.2,),
                "SpectralNormalization": (layers.Dense(2),), "ReversibleEmbedding": (10, 3),
                "ConvLSTM1D": (4, 3), "ConvLSTM2D": (4, 3), "ConvLSTM3D": (4, 3)}

    for name, cls in sorted(layers.LAYER_CLASSES.items()):
        if name != "InputLayer":
            yield cls(*required.get(name, ()))
    for cls in sorted(set(optimizers._OPTIMIZERS.values()), key=lambda c: c.__name__):
        yield cls()
    for cls in sorted(losses._CLASSES.values(), key=lambda c: c.__name__):
        yield cls()
    for cls in sorted(metrics.CLASSES.values(), key=lambda c: c.__name__):
        yield cls()
    yield schedules.ExponentialDecay(0.1, 10, 0.9)
    yield schedules.PiecewiseConstantDecay([10], [0.1, 0.01])
    yield schedules.CosineDecay(0.1, 100)
    yield schedules.PolynomialDecay(0.1, 100)
    yield schedules.InverseTimeDecay(0.1, 10, 0.5)
    yield schedules.CosineDecayRestarts(0.1, 10)
    for cls in sorted(set(initializers._BY_NAME.values()), key=lambda c: c.__name__):
        yield cls()
    for cls in sorted(regularizers._CLASSES.values(), key=lambda c: c.__name__):
        yield cls()
    for cls in sorted(constraints._CLASSES.values(), key=lambda c: c.__name__):
        yield cls()
    yield minidl.DTypePolicy("mixed_bfloat16")


@pytest.mark.parametrize("obj", list(_instances()), ids=lambda o: type(o).__name__)
def test_every_class_round_trips_its_config(obj):
    config = saving.serialize_keras_object(obj)
    json.dumps(config)   # what to_json and the model files need
    with saving.custom_object_scope({"double_it": double_it}):   # Lambda names it so
        again = saving.deserialize_keras_object(json.loads(json.dumps(config)))
        direct = type(obj).from_config(obj.get_config()) if hasattr(type(obj), "from_config") \
            else type(obj)(**obj.get_config())
    assert type(again) is type(obj)
    assert saving.serialize_keras_object(again)["config"] == config["config"]
    assert direct.get_config() == obj.get_config()


# ------------------------------------------------------------ models
def _functional():
    inputs = minidl.Input((4,), name="x")
    shared = layers.Dense(4, activation="relu", name="shared")
    h = shared(shared(inputs))
    outputs = layers.Dense(2, name="head")(Scale(3.0)(h))
    return minidl.Model(inputs, outputs, name="net")


def _nested():
    inner = minidl.Sequential([layers.Input((4,)), layers.Dense(3, name="inner_dense")],
                              name="inner")
    inputs = minidl.Input((4,))
    return minidl.Model(inputs, layers.Dense(1, name="out")(inner(inputs)), name="outer")


def _copy_weights(src, dst):
    dst.set_weights(src.get_weights())


def test_to_json_and_model_from_json(active_backend):
    x = np.random.default_rng(1).random((3, 4)).astype(np.float32)
    for model in (_functional(), _nested(),
                  minidl.Sequential([layers.Input((4,)), layers.Dense(2)], name="seq")):
        text = model.to_json()
        config = json.loads(text)
        assert config["module"] == "keras" and config["class_name"] == type(model).__name__
        again = models.model_from_json(text)
        assert type(again) is type(model) and again.name == model.name
        assert [l.name for l in again.layers] == [l.name for l in model.layers]
        _copy_weights(model, again)
        np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0),
                                   rtol=1e-6)
    with pytest.raises(ValueError, match="not JSON"):
        models.model_from_json("{nope")
    with pytest.raises(ValueError, match="not a model"):
        models.model_from_json(json.dumps(layers.serialize(layers.Dense(1))))


def test_clone_model_functional_keeps_the_architecture_with_new_weights(active_backend):
    model = _functional()
    clone = models.clone_model(model)
    assert clone is not model and clone.name == model.name
    assert [l.name for l in clone.layers] == [l.name for l in model.layers]
    assert all(a is not b for a, b in zip(clone.layers, model.layers))
    assert len(clone.weights) == len(model.weights) == 4   # the shared layer once
    _copy_weights(model, clone)
    x = np.random.default_rng(2).random((3, 4)).astype(np.float32)
    np.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_clone_model_sequential_and_input_tensors(active_backend):
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(3), layers.Dense(1)])
    clone = models.clone_model(model)
    assert isinstance(clone, minidl.Sequential) and len(clone.layers) == 2
    assert clone.layers[0] is not model.layers[0]
    new_input = minidl.Input((4,), name="fresh")
    clone = models.clone_model(model, input_tensors=new_input)
    assert clone.inputs[0] is new_input
    functional = _functional()
    new_input = minidl.Input((4,), name="other")
    clone = models.clone_model(functional, input_tensors=[new_input])
    assert clone.inputs[0] is new_input
    with pytest.raises(ValueError, match="input_tensors"):
        models.clone_model(functional, input_tensors=[new_input, new_input])


def test_clone_model_clone_function_and_recursive(active_backend):
    seen = []

    def clone_function(layer):
        seen.append(layer.name)
        config = layer.get_config()
        if isinstance(layer, layers.Dense):
            config["use_bias"] = False
        return layer.__class__.from_config(config)

    clone = models.clone_model(_nested(), clone_function=clone_function)
    assert seen == ["inner", "out"]   # the nested model is one item (recursive=False)
    seen.clear()
    clone = models.clone_model(_nested(), clone_function=clone_function, recursive=True)
    assert seen == ["inner_dense", "out"]
    assert all(not layer.use_bias for layer in clone.layers[1].layers + [clone.layers[-1]])
    calls = []

    def call_function(layer, *args, **kwargs):
        calls.append(layer.name)
        return layer(*args, **kwargs)

    models.clone_model(_functional(), call_function=call_function)
    assert calls == ["shared", "shared", calls[2], "head"]


class _Sub(minidl.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = layers.Dense(units)

    def call(self, x):
        return self.dense(x)

    def get_config(self):
        return dict(super().get_config(), units=self.units)


def test_clone_model_subclassed_goes_through_its_config(active_backend):
    clone = models.clone_model(_Sub(units=5))
    assert isinstance(clone, _Sub) and clone.units == 5
    with pytest.raises(ValueError, match="subclassed model"):
        models.clone_model(_Sub(), clone_function=lambda layer: layer)


def test_save_model(tmp_path, active_backend):
    model = _functional()
    path = os.fspath(tmp_path / "m.keras")
    models.save_model(model, path)
    loaded = minidl.models.load_model(path)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    saving.save_model(model, path)   # overwrite=True by default
