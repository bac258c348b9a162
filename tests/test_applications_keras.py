"""minidl.applications against what real Keras 3.15.1 builds for the same calls with
weights=None (tests/fixtures/keras_applications.json, written by keras_applications.py beside
it): weight counts, model name, output shape, every layer with weights (name, class, the
shape of each weight in Keras's order: what a Keras weights file maps onto by name) and the
names of all layers, and (PREDICT calls) the logits with the same weights in both. The
default-argument (ImageNet size) builds are checked by one slow test,
run with MINIDL_SLOW_TESTS=1."""

import ast
import json
import os
import re
import sys
from collections import Counter

import numpy as np
import pytest

import minidl
from minidl import applications, layers
from minidl.keras_files.state_walk import keras_functional_order
from minidl.session import clear_session

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
with open(os.path.join(HERE, "keras_applications.json")) as _f:
    KERAS = json.load(_f)
with np.load(os.path.join(HERE, "keras_applications_predict.npz"), allow_pickle=False) as _f:
    PREDICTED = dict(_f)
sys.path.insert(0, HERE)
from applications_weights import draw_weights  # noqa: E402

slow = pytest.mark.skipif(os.environ.get("MINIDL_SLOW_TESTS") != "1",
                          reason="builds every application at ImageNet size (minutes, GBs); "
                                 "set MINIDL_SLOW_TESTS=1")



def keras_names(builder, layers):
    """Keras's layer names, counters stripped, as minidl names them: Keras's MobileNetV3 gate
    is ReLU(6)(x + 3) / 6 on symbolic tensors, minidl's one Activation("hard_sigmoid") in the
    ReLU's place (minidl/applications/mobilenet_v3.py): one automatic "re_lu" per
    squeeze-and-excitation block is an "activation" in minidl. Keras's ConvNeXt adds each
    block's residual with `inputs + x`, minidl with one automatic Add layer."""
    names = Counter(stripped(entry[0]) for entry in layers)
    if builder.startswith("ConvNeXt"):      # Keras's residual `inputs + x`: an Add in minidl
        names["add"] += sum(entry[0].endswith("_layer_scale") for entry in layers)
    if builder.startswith("MobileNetV3"):
        gates = sum(entry[0].endswith("squeeze_excite_mul") for entry in layers)
        names["re_lu"] -= gates
        names["activation"] += gates
    return +names


def call_of(key):
    """'MobileNet(alpha=0.25, classes=10)' -> ('MobileNet', {'alpha': 0.25, 'classes': 10})."""
    call = ast.parse(key, mode="eval").body           # literals only: nothing is run
    return call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def stripped(name):
    return re.sub(r"_\d+$", "", name)


def check(key, expected):
    builder, kwargs = call_of(key)
    clear_session()      # automatic names count from zero, as in the fixture's fresh session
    model = getattr(applications, builder)(weights=None, **kwargs)
    sizes = lambda ws: sum(int(np.prod(w.shape)) for w in ws)
    assert model.count_params() == expected["count_params"]
    assert sizes(model.trainable_weights) == expected["trainable"]
    assert sizes(model.non_trainable_weights) == expected["non_trainable"]
    assert model.name == expected["name"]
    assert list(model.output_shape[1:]) == expected["output_shape"]
    # in Keras's model.layers order (a branching graph's topological order, which Keras 3's
    # .weights.h5 files follow), as minidl's Keras-file writer and reader order them
    weighted = [[layer.name, type(layer).__name__, [list(w.shape) for w in layer.weights]]
                for layer in keras_functional_order(model) if layer.weights]
    assert weighted == [entry for entry in expected["layers"] if entry[2]]
    names = Counter(stripped(layer.name) for layer in model.layers)
    assert names == keras_names(builder, expected["layers"])
    return model


@pytest.fixture(autouse=True)
def numpy_first():
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    yield
    minidl.set_backend("numpy")


@pytest.mark.parametrize("key", sorted(KERAS["small"]))
def test_small_builds_match_keras(key):
    check(key, KERAS["small"][key])


@slow
@pytest.mark.parametrize("key", sorted(KERAS["full"]))
def test_imagenet_size_builds_match_keras(key):
    check(key, KERAS["full"][key])


@pytest.mark.parametrize("key", sorted(KERAS["predict"]))
def test_predictions_match_keras_with_the_same_weights(key):
    """The weights draw_weights gives (the same numbers Keras's model got), then minidl's
    logits for Keras's input batch within 1e-4 of Keras's, relative to their scale."""
    predictions_match_keras(key)


# the new heads and layers on every backend: GlobalAveragePooling2D(keepdims) and the
# convolution head (MobileNet), hard sigmoid / hard swish (MobileNetV3), grouped convolution,
# LayerScale, nested Sequential (ConvNeXt); CustomScaleLayer has its own per-backend test
# (tests/test_applications_layers.py)
ON_EVERY_BACKEND = [key for key in sorted(KERAS["predict"])
                    if key.startswith(("MobileNet(", "MobileNetV3Small(", "ConvNeXtTiny("))]


@pytest.mark.parametrize("key", ON_EVERY_BACKEND)
def test_predictions_match_keras_on_every_backend(active_backend, key):
    predictions_match_keras(key)


def predictions_match_keras(key):
    model = check(key, KERAS["predict"][key])
    weights = draw_weights(KERAS["predict"][key]["layers"])
    for layer in model.layers:
        if layer.weights:
            layer.set_weights(weights[layer.name])
    x, want = PREDICTED[f"{key}/x"], PREDICTED[f"{key}/y"]
    assert np.all(np.isfinite(want)) and np.abs(want).max() > 0.1      # a real comparison
    got = model.predict(x, verbose=0)
    # random BatchNormalization statistics do not normalize, so deep residual sums grow
    # (Xception's logits reach 3e8): float32 agrees to 1e-4 of the logits' scale
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * scale)


# each module's preprocess_input as Keras 3.15.1's (keras/src/applications/*.py: the mode it
# passes to imagenet_utils.preprocess_input; None: the identity, the model preprocesses)
PREPROCESS = {"vgg19": "caffe", "resnet_v2": "tf", "densenet": "torch", "mobilenet": "tf",
              "mobilenet_v3": None, "xception": "tf", "inception_v3": "tf",
              "inception_resnet_v2": "tf", "efficientnet": None, "efficientnet_v2": None,
              "convnext": None, "nasnet": "tf"}


@pytest.mark.parametrize("module", sorted(PREPROCESS))
def test_modules_preprocess_and_decode_as_keras(module):
    from minidl.applications import imagenet_utils
    namespace = getattr(applications, module)
    pixels = np.random.default_rng(0).uniform(0, 255, (2, 4, 4, 3)).astype(np.float32)
    got = namespace.preprocess_input(pixels)
    mode = PREPROCESS[module]
    want = pixels if mode is None else imagenet_utils.preprocess_input(pixels, mode=mode)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match=r"shape \(samples, 1000\)"):
        namespace.decode_predictions(np.zeros((2, 10)))
    for builder in namespace.__all__:
        if builder[0].isupper() and builder not in ("LayerScale", "StochasticDepth"):
            assert getattr(applications, builder) is getattr(namespace, builder)


def test_keras2_file_with_other_automatic_names_loads_by_position(tmp_path):
    """Keras's published files for Xception, InceptionV3, InceptionResNetV2 and NASNet name
    many layers automatically; minidl's automatic names depend on what the session built
    before, so such a file (every weighted layer there, under other names) is read by
    position in Keras's layer order, as Keras reads it."""
    import h5py
    from minidl.applications import imagenet_utils
    from minidl.keras_files import pretrained

    def tiny():
        inputs = layers.Input((8, 8, 3))
        a = layers.BatchNormalization()(layers.Conv2D(4, 3)(inputs))
        b = layers.Conv2D(4, 3)(inputs)
        x = layers.concatenate([a, b])
        return imagenet_utils.finish(inputs, None, layers.Dense(2)(layers.Flatten()(x)),
                                     "tiny", None)

    clear_session()
    first = tiny()
    path = str(tmp_path / "keras2.h5")
    ordered = [item for item in keras_functional_order(first) if item.weights]
    suffixes = {"Conv2D": ("kernel", "bias"), "Dense": ("kernel", "bias"),
                "BatchNormalization": ("gamma", "beta", "moving_mean", "moving_variance")}
    with h5py.File(path, "w") as f:          # Keras 2's layout, names from another session
        names = [f"{layer.name}_{7 + i}" for i, layer in enumerate(ordered)]
        f.attrs["layer_names"] = [n.encode() for n in names]
        for name, layer in zip(names, ordered):
            group = f.create_group(name)
            weight_names = [f"{name}/{s}:0" for s in suffixes[type(layer).__name__]]
            group.attrs["weight_names"] = [w.encode() for w in weight_names]
            for w, value in zip(weight_names, layer.get_weights()):
                group.create_dataset(w, data=value)
    second = tiny()                                       # other automatic names again
    assert [l.name for l in second.layers] != [l.name for l in first.layers]
    pretrained.load_pretrained(second, path, "test")
    for a, b in zip(first.get_weights(), second.get_weights()):
        np.testing.assert_array_equal(a, b)
